#!/usr/bin/env node
// What one test file pays before its first test (docs/BENCHMARKS.md, "The test suite's CPU"):
// CPU and wall seconds of the imports, the storage, createRuntime, buildApp + ready, 50 requests
// and the close, as test/helpers/app.ts does them, from the compiled tree the suite runs.
//   node [V8 flags] scripts/test-timing/setup-cost.mjs      (DATABASE_URL: on PostgreSQL)
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pgliteTemplate } from '../pglite-template.mjs';
import { makeTestDataRoot } from '../test-data-root.mjs';
import { buildTestTree } from '../test-build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
if (!process.env.DATABASE_URL) process.env.PRICEHOUND_TEST_TEMPLATE = pgliteTemplate(process.env);
// The copies where the suite puts them (scripts/test-data-root.mjs); TEST_TMPFS=0: os.tmpdir().
const dataRoot = process.env.TEST_TMPFS === '0' ? undefined : makeTestDataRoot();
if (dataRoot) process.env.PRICEHOUND_TEST_DATA_ROOT = dataRoot;
const tree = buildTestTree(root, path.join(root, '.test-cache', `setup-cost-${process.pid}`));
const load = (f) => import(pathToFileURL(path.join(tree, f)).href);
const cpu = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};
let c0 = cpu();
let w0 = performance.now();
const mark = (label) => {
  console.log(
    `${label.padEnd(12)} CPU ${(cpu() - c0).toFixed(2)} s  wall ${((performance.now() - w0) / 1000).toFixed(2)} s`,
  );
  c0 = cpu();
  w0 = performance.now();
};
try {
  const [{ default: pino }, { loadConfig }, { buildApp }, { createRuntime }, { testStorage }] = await Promise.all([
    import('pino'),
    load('src/config.js'),
    load('src/app.js'),
    load('src/runtime.js'),
    load('test/helpers/database.js'),
  ]);
  mark('imports');
  const storage = await testStorage();
  mark('storage');
  const rt = await createRuntime(loadConfig({ ...storage.env }), pino({ level: 'silent' }));
  mark('runtime');
  const app = await buildApp(rt);
  await app.ready();
  mark('app');
  for (let i = 0; i < 50; i++) await app.inject({ method: 'GET', url: '/healthz' });
  mark('50 requests');
  await app.close();
  await rt.close();
  await storage.cleanup();
  mark('close');
} finally {
  fs.rmSync(tree, { recursive: true, force: true });
  if (dataRoot) fs.rmSync(dataRoot, { recursive: true, force: true });
}
