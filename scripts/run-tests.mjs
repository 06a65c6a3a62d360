#!/usr/bin/env node
// Runs the test suite with node's test runner. Before that it prepares a migrated PGlite data
// directory once (keyed by the migrations' content) that each test file copies instead of
// creating its own, which would take ~4 s per file.
//   node scripts/run-tests.mjs [file or directory ...]
// DATABASE_URL / REDIS_URL in the environment switch the suite to PostgreSQL / Redis.
// TEST_TIMINGS=dir records CPU and wall time per test file and per test into dir
// (scripts/test-timing/; `node scripts/test-timing/report.mjs dir` summarises them).
// The tests run compiled, from a mirror of the checkout (scripts/test-build.mjs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pgliteTemplate } from './pglite-template.mjs';
import { buildTestTree, removeStaleTrees } from './test-build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);

function findTests(p) {
  const st = fs.statSync(p);
  if (st.isFile()) return [p];
  return fs
    .readdirSync(p)
    .sort()
    .flatMap((f) => {
      const full = path.join(p, f);
      // test/browser drives Chromium against real servers: run it by naming it (npm run test:browser, .ci/run).
      if (fs.statSync(full).isDirectory())
        return f === 'helpers' || f === 'fixtures' || (f === 'browser' && path.resolve(p) === path.join(root, 'test'))
          ? []
          : findTests(full);
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

// The suite runs compiled (scripts/test-build.mjs): a tree of this run's own, removed after it.
const cache = path.join(root, '.test-cache');
removeStaleTrees(cache, 'build-');
const tree = buildTestTree(root, path.join(cache, `build-${process.pid}`));
const compiled = files.map((f) => path.join(tree, path.relative(root, path.resolve(f))).replace(/\.ts$/, '.js'));

const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout'];
if (env.TEST_TIMINGS) {
  env.TEST_TIMINGS = path.resolve(env.TEST_TIMINGS);
  fs.mkdirSync(env.TEST_TIMINGS, { recursive: true });
  const hook = path.join(root, 'scripts/test-timing/cpu-hook.mjs');
  env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --import=${hook}`.trim();
  reporters.push(`--test-reporter=${path.join(root, 'scripts/test-timing/reporter.mjs')}`);
  reporters.push('--test-reporter-destination=stdout');
}

// V8 flags of the test processes (node --test passes its own to each file's process), replaced by
// TEST_NODE_FLAGS. --liftoff-only: the embedded database is WebAssembly, and optimising its hot
// functions again with TurboFan costs more CPU than a test process lives to win back: opening it
// took 2.2 CPU-s instead of 3.3, the heaviest file 29 CPU-s instead of 33 (docs/BENCHMARKS.md,
// "The test suite's CPU").
const nodeFlags = (env.TEST_NODE_FLAGS ?? '--liftoff-only').split(' ').filter(Boolean);

const concurrency = env.TEST_CONCURRENCY ?? String(Math.max(2, os.availableParallelism()));
const r = spawnSync(
  process.execPath,
  ['--enable-source-maps', ...nodeFlags, '--test', `--test-concurrency=${concurrency}`, ...reporters, ...compiled],
  { stdio: 'inherit', env },
);
fs.rmSync(tree, { recursive: true, force: true });
process.exit(r.status ?? 1);
