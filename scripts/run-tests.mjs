#!/usr/bin/env node
// Runs the test suite with node's test runner. Before that it prepares a migrated PGlite data
// directory once (keyed by the migrations' content) that each test file copies instead of
// creating its own, which would take ~4 s per file.
//   node scripts/run-tests.mjs [file or directory ...]
// DATABASE_URL / REDIS_URL in the environment switch the suite to PostgreSQL / Redis.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);

function findTests(p) {
  const st = fs.statSync(p);
  if (st.isFile()) return [p];
  return fs.readdirSync(p).sort().flatMap((f) => {
    const full = path.join(p, f);
    // test/browser drives Chromium against real servers: run it by naming it (npm run test:browser, .ci/run).
    if (fs.statSync(full).isDirectory()) return f === 'helpers' || f === 'fixtures' || (f === 'browser' && path.resolve(p) === path.join(root, 'test')) ? [] : findTests(full);
    return f.endsWith('.test.ts') ? [full] : [];
  });
}

const args = process.argv.slice(2);
const files = (args.length ? args : ['test']).flatMap(findTests);
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}

const env = { ...process.env };
if (!env.DATABASE_URL) {
  const migrations = fs.readdirSync('migrations').sort().map((f) => f + fs.readFileSync(path.join('migrations', f), 'utf8')).join('\n');
  const hash = crypto.createHash('sha256').update(migrations).digest('hex').slice(0, 16);
  const template = path.join(root, '.test-cache', `pglite-${hash}`);
  if (!fs.existsSync(path.join(template, 'PG_VERSION'))) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-template-'));
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/make-test-template.ts', tmp], { stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
    fs.rmSync(template, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(template), { recursive: true });
    fs.cpSync(tmp, template, { recursive: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  env.PRICEHOUND_TEST_TEMPLATE = template;
}

const concurrency = env.TEST_CONCURRENCY ?? String(Math.max(2, os.availableParallelism()));
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit', env },
);
process.exit(r.status ?? 1);
