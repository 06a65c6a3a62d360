import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The dashboard's build (docs/DASHBOARD.md). `npm run build` runs `vite build` with this file:
 * static files in dashboard/dist, which the service serves at /dashboard (src/dashboard).
 * `npm run dashboard:dev` serves the sources with hot reload and proxies the API to a running
 * service (PRICEHOUND_URL, default http://127.0.0.1:8080), so the page and the API share an
 * origin as they do in production.
 */
const api = process.env.PRICEHOUND_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  // The typed client from its sources (as dashboard/tsconfig.json reads it), not its last build.
  resolve: {
    alias: { '@pricehound/client': fileURLToPath(new URL('../clients/typescript/src/index.ts', import.meta.url)) },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The polyfill is an inline-free module, but every browser the dashboard supports has modulepreload.
    modulePreload: { polyfill: false },
    // One small app: a single JS and a single CSS file load faster than a split and keep CSP simple.
    assetsInlineLimit: 0,
    reportCompressedSize: true,
    chunkSizeWarningLimit: 200,
  },
  server: {
    host: '127.0.0.1',
    proxy: { '/api': api, '/v1': api },
  },
});
