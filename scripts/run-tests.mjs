#!/usr/bin/env node
// Runs the test suite with node's test runner. Before that it prepares a migrated PGlite data
// directory once (keyed by the migrations' content) that each test file copies instead of
// creating its own, which would take ~4 s per file.
//   node scripts/run-tests.mjs [file or directory ...]
// DATABASE_URL / REDIS_URL in the environment switch the suite to PostgreSQL / Redis.
// Processes the tests spawn run the compiled CLI when dist/ is current (see compiledCli below).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pgliteTemplate } from './pglite-template.mjs';

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
  try {
    env.PRICEHOUND_TEST_TEMPLATE = pgliteTemplate(env);
  } catch (err) {
    console.error(err.message);
    process.exit(1);
  }
}

/**
 * dist/cli/main.js when every source file has a compiled file at least as new (as after `npm
 * install` or `npm run build`), so spawned processes never run stale code; null otherwise.
 */
function compiledCli() {
  const cli = path.join(root, 'dist/cli/main.js');
  if (!fs.existsSync(cli)) return null;
  const stale = (dir) => fs.readdirSync(dir, { withFileTypes: true }).some((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return stale(full);
    if (!e.name.endsWith('.ts') || e.name.endsWith('.d.ts')) return false;
    const out = path.join(root, 'dist', path.relative(path.join(root, 'src'), full)).replace(/\.ts$/, '.js');
    return !fs.existsSync(out) || fs.statSync(out).mtimeMs < fs.statSync(full).mtimeMs;
  });
  return stale(path.join(root, 'src')) ? null : cli;
}

const cli = compiledCli();
if (cli) env.PRICEHOUND_TEST_COMPILED_CLI = cli;
else delete env.PRICEHOUND_TEST_COMPILED_CLI;
console.log(`# spawned processes run ${cli ? 'the compiled CLI (dist/ is current)' : 'from source (dist/ is missing or older than src/; npm run build to compile)'}`);

const concurrency = env.TEST_CONCURRENCY ?? String(Math.max(2, os.availableParallelism()));
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit', env },
);
process.exit(r.status ?? 1);
