#!/usr/bin/env node
// npm run lint:openapi: builds the OpenAPI document from the app's route schemas
// (scripts/export-openapi.ts, written to dist/openapi.json) and lints it with Spectral using
// .spectral.yaml (spectral:oas + the OWASP API ruleset, both from node_modules; nothing is
// fetched). Fails on any error, and on any warning whose rule is not listed, with its count, under
// "Warnings left standing" in docs/OPENAPI.md (as "- `rule` (count): why").
//   node scripts/lint-openapi.mjs [--keep]     --keep: also leave Spectral's raw report in dist/
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pgliteTemplate } from './pglite-template.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const require = createRequire(import.meta.url);
// Spectral's dependency @scarf/scarf reports installs unless told not to; there is no network anyway.
const env = { ...process.env, SCARF_ANALYTICS: 'false', DO_NOT_TRACK: '1' };
const docPath = path.join('dist', 'openapi.json');
const reportPath = path.join('dist', 'openapi-lint.json');

/** Rule -> count from the list under "### Warnings left standing" in docs/OPENAPI.md. */
function explainedWarnings() {
  const doc = fs.readFileSync(path.join('docs', 'OPENAPI.md'), 'utf8');
  const section = /^### Warnings left standing\n([\s\S]*?)(?=^#{1,3} |(?![\s\S]))/m.exec(doc)?.[1];
  if (section === undefined) fail('docs/OPENAPI.md has no "### Warnings left standing" section');
  return new Map([...section.matchAll(/^- `([^`]+)` \((\d+)\)/gm)].map((m) => [m[1], Number(m[2])]));
}
const explained = explainedWarnings();

function fail(message) {
  console.error(`openapi lint: ${message}`);
  process.exit(1);
}

function template() {
  try {
    return pgliteTemplate(env);
  } catch (err) {
    fail(err.message);
  }
}

const exported = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/export-openapi.ts', docPath], {
  stdio: 'inherit',
  env: { ...env, PRICEHOUND_TEST_TEMPLATE: template() },
});
if (exported.status !== 0) fail('could not build the document (scripts/export-openapi.ts)');

const cliPkg = require.resolve('@stoplight/spectral-cli/package.json');
const cli = path.join(path.dirname(cliPkg), JSON.parse(fs.readFileSync(cliPkg, 'utf8')).bin.spectral);
const lint = spawnSync(
  process.execPath,
  [
    cli,
    'lint',
    docPath,
    '--ruleset',
    '.spectral.yaml',
    '--format',
    'json',
    '--output',
    reportPath,
    '--fail-severity',
    'error',
    '--quiet',
  ],
  { stdio: ['ignore', 'inherit', 'inherit'], env },
);
if (!fs.existsSync(reportPath)) fail(`spectral did not run (exit ${lint.status ?? lint.signal})`);
const results = JSON.parse(fs.readFileSync(reportPath, 'utf8'));

const SEVERITY = ['error', 'warning', 'info', 'hint'];
const byRule = new Map();
for (const r of results) {
  const key = `${SEVERITY[r.severity]} ${r.code}`;
  if (!byRule.has(key)) byRule.set(key, []);
  byRule.get(key).push(r);
}
const where = (r) => `${r.path.join('.')} (line ${r.range.start.line + 1})`;
const counts = Object.fromEntries(SEVERITY.map((s) => [s, results.filter((r) => SEVERITY[r.severity] === s).length]));

for (const [key, list] of [...byRule].sort()) {
  const [severity, code] = key.split(' ');
  console.log(`${severity} ${code} (${list.length}): ${list[0].message}`);
  const shown = severity === 'error' ? list : list.slice(0, 5);
  for (const r of shown) console.log(`    ${where(r)}`);
  if (shown.length < list.length) console.log(`    ... and ${list.length - shown.length} more`);
}
console.log(
  `openapi lint: ${counts.error} errors, ${counts.warning} warnings, ${counts.info} infos, ${counts.hint} hints in ${docPath}`,
);

const warned = new Map();
for (const r of results) if (r.severity === 1) warned.set(r.code, (warned.get(r.code) ?? 0) + 1);
const unexplained = [...warned.keys()].filter((code) => !explained.has(code));
const miscounted = [...warned]
  .filter(([code, n]) => explained.has(code) && explained.get(code) !== n)
  .map(([code, n]) => `${code} (${n}, docs say ${explained.get(code)})`);
const stale = [...explained.keys()].filter((code) => !warned.has(code));
if (!process.argv.includes('--keep')) fs.rmSync(reportPath, { force: true });
if (counts.error > 0 || lint.status !== 0) fail('errors found (see above)');
if (unexplained.length > 0)
  fail(`warnings that docs/OPENAPI.md ("Warnings left standing") does not explain: ${unexplained.join(', ')}`);
if (miscounted.length > 0)
  fail(`docs/OPENAPI.md ("Warnings left standing") has other counts: ${miscounted.join(', ')}`);
if (stale.length > 0)
  fail(`docs/OPENAPI.md ("Warnings left standing") lists warnings that no longer occur: ${stale.join(', ')}`);
console.log('openapi lint: ok');
