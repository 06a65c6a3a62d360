#!/usr/bin/env node
// Runs the test suite with node's test runner. Before that it prepares a migrated PGlite data
// directory once (keyed by the migrations' content) that each test file copies instead of
// creating its own, which would take ~4 s per file.
//   node scripts/run-tests.mjs [file or directory ...]
// DATABASE_URL / REDIS_URL in the environment switch the suite to PostgreSQL / Redis.
// TEST_TIMINGS=dir records CPU and wall time per test file and per test into dir
// (scripts/test-timing/; `node scripts/test-timing/report.mjs dir` summarises them).
// The tests run compiled, from a mirror of the checkout (scripts/test-build.mjs).
// Files share a few processes (scripts/test-shared.mjs) but for those ALONE (below);
// TEST_SHARED=0 runs every file in a process of its own. The files' embedded databases are copied
// to a tmpfs when there is one (scripts/test-data-root.mjs); TEST_TMPFS=0 does not.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropPgRun, makePgTemplate } from './pg-template.mjs';
import { pgliteTemplate } from './pglite-template.mjs';
import { makeTestDataRoot } from './test-data-root.mjs';
import { buildTestTree, removeStaleTrees } from './test-build.mjs';

/**
 * Test files that run in a process of their own, each with the reason: they change what the
 * whole process shares, or measure the process itself. Every other file shares one
 * (scripts/test-shared.mjs), one file after another.
 */
const ALONE = new Map([
  // mock.timers replaces setTimeout/setInterval of the whole process while its tests run.
  ['test/jobs/periodic.test.ts', 'mocked timers'],
]);
/** Directories whose files all run alone. */
const ALONE_UNDER = new Map([
  // Chromium against real server processes (npm run test:browser): wall time, not set-up, is
  // their cost, and the performance test measures the page with nothing else running.
  ['test/browser/', 'Chromium and real servers, one file at a time'],
]);
/**
 * Files that run after all the others with nothing beside them: they measure time. The rest of
 * a run may take two at once (the browser tests: Chromium and a server keep ~0.9 of one core
 * busy, measured).
 */
const SOLO = new Map([['test/browser/performance.test.ts', 'measures the page: nothing else may run']]);
const runsAlone = (rel) => ALONE.has(rel) || [...ALONE_UNDER.keys()].some((dir) => rel.startsWith(dir));

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
let pgRun;
try {
  if (env.DATABASE_URL) env.PRICEHOUND_TEST_PG_RUN = pgRun = await makePgTemplate(env.DATABASE_URL, env);
  else env.PRICEHOUND_TEST_TEMPLATE = pgliteTemplate(env);
} catch (err) {
  console.error(err.message);
  process.exit(1);
}

// The embedded databases' copies on a tmpfs of this run's own (scripts/test-data-root.mjs);
// TEST_TMPFS=0 leaves them in the temporary directory.
const dataRoot = env.TEST_TMPFS === '0' ? undefined : makeTestDataRoot();
if (dataRoot) env.PRICEHOUND_TEST_DATA_ROOT = dataRoot;

// The suite runs compiled (scripts/test-build.mjs): a tree of this run's own, removed after it.
const cache = path.join(root, '.test-cache');
removeStaleTrees(cache, 'build-');
const tree = buildTestTree(root, path.join(cache, `build-${process.pid}`));
const rel = (f) => path.relative(root, path.resolve(f));
const compiledOf = (f) => path.join(tree, rel(f)).replace(/\.ts$/, '.js');

const concurrency = env.TEST_CONCURRENCY ?? String(Math.max(2, os.availableParallelism()));
const sharing = env.TEST_SHARED !== '0';
const shared = sharing ? files.filter((f) => !runsAlone(rel(f))) : [];
const alone = files.filter((f) => !shared.includes(f));
// One shared process per slot; if one ends early, the others take the rest of the queue. The
// files of their own go first: the shared processes then drain the queue together and end at
// about the same time.
const queue = path.join(tree, '.shared-queue');
const entries = [];
if (shared.length > 0) {
  fs.mkdirSync(queue);
  const plan = path.join(tree, '.shared-plan.json');
  fs.writeFileSync(
    plan,
    JSON.stringify({ queue, files: shared.map((f) => ({ name: rel(f), compiled: compiledOf(f) })) }),
  );
  const count = Math.min(shared.length, Number(concurrency));
  for (let i = 1; i <= count; i++) {
    const entry = path.join(tree, `shared-${i}.test.js`);
    fs.writeFileSync(
      entry,
      `import { runShared } from ${JSON.stringify(path.join(tree, 'scripts/test-shared.mjs'))};\n` +
        `await runShared(${JSON.stringify(plan)});\n`,
    );
    entries.push(entry);
  }
}
const solo = alone.filter((f) => SOLO.has(rel(f)));
const compiled = [...alone.filter((f) => !solo.includes(f)).map(compiledOf), ...entries];

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

const runTests = (testFiles, slots) =>
  spawnSync(
    process.execPath,
    [
      '--enable-source-maps',
      ...nodeFlags,
      '--test',
      `--test-concurrency=${slots}`,
      // A test process ends when its last test has: a shared one would otherwise wait on whatever a
      // file left open (seen: a listening socket on 127.0.0.1 once the whole queue had run).
      '--test-force-exit',
      ...reporters,
      ...testFiles,
    ],
    { stdio: 'inherit', env },
  ).status ?? 1;
let status = compiled.length > 0 ? runTests(compiled, concurrency) : 0;
for (const f of solo) status = runTests([compiledOf(f)], 1) || status;
// A file a shared process never reached, or that its process ended in, is named here: the
// reporter names only the shared process.
let missing = 0;
shared.forEach((f, i) => {
  const taken = fs.existsSync(path.join(queue, `${i}.taken`));
  if (taken && fs.existsSync(path.join(queue, `${i}.done`))) return;
  console.error(
    taken
      ? `${rel(f)}: its shared process ended in it (a crash, or an \`after\` hook that threw: the later ones never run)`
      : `${rel(f)}: never ran`,
  );
  missing++;
});
fs.rmSync(tree, { recursive: true, force: true });
if (dataRoot) fs.rmSync(dataRoot, { recursive: true, force: true });
if (pgRun) await dropPgRun(env.DATABASE_URL, pgRun);
process.exit(missing > 0 ? 1 : status);
