#!/usr/bin/env node
// Where one opening of the embedded database goes (docs/BENCHMARKS.md, "The test suite's CPU"):
// CPU seconds (user + sys, all threads: process.cpuUsage) of each step of a test file's storage
// and runtime, repeated N times in one process as a shared test process does, after one warm-up.
//   [TEST_TMPFS=0] node --liftoff-only scripts/test-timing/open-cost.mjs [N=12]
// (TEST_TMPFS=0: the copies in os.tmpdir() rather than on the suite's tmpfs, as before.)
// Steps: copy (testStorage: the template copied), thread (a worker importing PGlite, idle),
// instantiate (PGlite.create with noInitDb: WebAssembly instance, its file bundle, the mounts),
// start (the rest of PGlite.create: the engine started on the copy), open (the app's whole
// openDatabase, as the steps above together), runtime (createRuntime on that database: migration
// check, key, caches), close (runtime, engine, storage removed).
/* global WebAssembly */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pgliteTemplate } from '../pglite-template.mjs';
import { makeTestDataRoot } from '../test-data-root.mjs';
import { buildTestTree } from '../test-build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const n = Number(process.argv[2] ?? 12);
process.env.PRICEHOUND_TEST_TEMPLATE = pgliteTemplate(process.env);
// The copies where the suite puts them (scripts/test-data-root.mjs); TEST_TMPFS=0: os.tmpdir().
const dataRoot = process.env.TEST_TMPFS === '0' ? undefined : makeTestDataRoot();
if (dataRoot) process.env.PRICEHOUND_TEST_DATA_ROOT = dataRoot;
const tree = buildTestTree(root, path.join(root, '.test-cache', `open-cost-${process.pid}`));
const load = (f) => import(pathToFileURL(path.join(tree, f)).href);
const cpu = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};

// A worker doing PGlite's steps one at a time, each on request.
const probe = `
import { parentPort, workerData } from 'node:worker_threads';
const { PGlite } = await import('@electric-sql/pglite');
const opts = (extra) => ({ pgliteWasmModule: workerData.wasmModule,
  startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'], ...extra });
parentPort.on('message', async ({ step, dir }) => {
  if (step === 'instantiate') await PGlite.create(dir, opts({ noInitDb: true }));
  if (step === 'start') { const pg = await PGlite.create(dir, opts({})); await pg.close(); }
  parentPort.postMessage('done');
});
parentPort.postMessage('ready');
`;
const probeFile = path.join(tree, 'open-cost-probe.mjs');
fs.writeFileSync(probeFile, probe);

const rows = [];
try {
  const [{ default: pino }, { loadConfig }, { createRuntime }, { openDatabase }, { testStorage }] = await Promise.all([
    import('pino'),
    load('src/config.js'),
    load('src/runtime.js'),
    load('src/db/open.js'),
    load('test/helpers/database.js'),
  ]);
  const wasmModule = await WebAssembly.compile(
    fs.readFileSync(new URL(import.meta.resolve('@electric-sql/pglite/pglite.wasm'))),
  );
  for (let i = 0; i <= n; i++) {
    const r = {};
    let c0 = cpu();
    const mark = (k) => {
      const c = cpu();
      r[k] = c - c0;
      c0 = c;
    };
    // The steps apart, on one copy.
    const probeStorage = await testStorage();
    mark('copy');
    const w = new Worker(probeFile, { workerData: { wasmModule } });
    const next = () => new Promise((res) => w.once('message', res));
    await next();
    mark('thread');
    const dir = path.join(probeStorage.env.DATA_DIR, 'pgdata');
    w.postMessage({ step: 'instantiate', dir });
    await next();
    mark('instantiate');
    c0 = cpu();
    w.postMessage({ step: 'start', dir });
    await next();
    mark('create');
    await w.terminate();
    await probeStorage.cleanup();
    c0 = cpu();
    // The app's own path, on another copy.
    const storage = await testStorage();
    c0 = cpu();
    const config = loadConfig({ ...storage.env });
    const db = await openDatabase(config);
    mark('open');
    const rt = await createRuntime(config, pino({ level: 'silent' }), { db });
    mark('runtime');
    await rt.close();
    await db.close();
    await storage.cleanup();
    mark('close');
    r.start = r.create - r.instantiate;
    if (i > 0) rows.push(r);
    console.log(
      i === 0 ? 'warm-up' : `#${i}`,
      Object.entries(r)
        .map(([k, v]) => `${k} ${v.toFixed(3)}`)
        .join('  '),
    );
  }
  const keys = ['copy', 'thread', 'instantiate', 'start', 'create', 'open', 'runtime', 'close'];
  console.log('\nstep         median  min    max    (CPU-s, %d samples)', rows.length);
  for (const k of keys) {
    const v = rows.map((r) => r[k]).sort((a, b) => a - b);
    console.log(`${k.padEnd(12)} ${v[v.length >> 1].toFixed(3)}  ${v[0].toFixed(3)}  ${v[v.length - 1].toFixed(3)}`);
  }
} finally {
  fs.rmSync(tree, { recursive: true, force: true });
  if (dataRoot) fs.rmSync(dataRoot, { recursive: true, force: true });
}
