#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm install` via the prepare script).
import('../dist/cli/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli/main.js')) {
    console.error('pricehound: dist/ is missing; run `npm run build` (npm install does it for you).');
    process.exit(1);
  }
  throw err;
});
