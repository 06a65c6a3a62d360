#!/usr/bin/env node
// Summarises a timed test run (scripts/run-tests.mjs with TEST_TIMINGS=dir; docs/BENCHMARKS.md,
// "The test suite"): CPU seconds and wall seconds per test file, the file's own process and every
// process it started (servers, CLIs), slowest first, then the slowest tests.
//   node scripts/test-timing/report.mjs dir [how many, default 15]
import fs from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
const top = Number(process.argv[3] ?? 15);
const read = (f) =>
  fs.existsSync(path.join(dir, f))
    ? fs
        .readFileSync(path.join(dir, f), 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
const procs = read('cpu.jsonl');
const tests = read('tests.jsonl');

// Files run in shared processes (scripts/test-shared.mjs) have a line of their own ({ file,
// shared: pid }); what their process spent besides them (its start, between files) is listed as
// SHARED. Processes a file started carry its name (`file`); the others belong to their nearest
// ancestor that ran a test file.
const SHARED = '(shared processes: start-up and between files)';
const isEntry = (f) => /\/shared-\d+\.test\.js$/.test(f);
const byPid = new Map(procs.filter((p) => !p.shared).map((p) => [p.pid, p]));
const fileOf = (p) => p.argv?.find((a) => /\.test\.(js|ts)$/.test(a));
const owner = (p) => {
  if (p.file) return p.file;
  for (let q = p, hops = 0; q && hops < 20; q = byPid.get(q.ppid), hops++) {
    const f = fileOf(q);
    if (f) return isEntry(f) ? SHARED : f;
  }
  return undefined;
};
const short = (f) => f.replace(/^.*?\/(test\/)/, '$1').replace(/\.js$/, '.ts');
const files = new Map();
const charge = (f, cpu, wall) => {
  const e = files.get(short(f)) ?? { cpu: 0, wall: 0, procs: 0 };
  e.cpu += cpu;
  e.wall += wall;
  e.procs++;
  files.set(short(f), e);
};
const cpuOf = (p) => (p.user_ms + p.sys_ms) / 1000;
const sharedCpu = new Map();
for (const p of procs.filter((q) => q.shared)) {
  charge(p.file, cpuOf(p), p.wall_ms / 1000);
  sharedCpu.set(p.shared, (sharedCpu.get(p.shared) ?? 0) + cpuOf(p));
}
for (const p of procs.filter((q) => !q.shared)) {
  const own = fileOf(p);
  if (own && isEntry(own)) {
    charge(SHARED, cpuOf(p) - (sharedCpu.get(p.pid) ?? 0), 0);
    continue;
  }
  const f = owner(p);
  if (f) charge(f, cpuOf(p), own === f ? p.wall_ms / 1000 : 0);
}
const rows = [...files].sort((a, b) => b[1].cpu - a[1].cpu);
const total = rows.reduce((s, [, e]) => s + e.cpu, 0);
const wall = rows.reduce((s, [, e]) => s + e.wall, 0);
console.log(`${rows.length} files: ${total.toFixed(0)} CPU-s, ${wall.toFixed(0)} file-wall-s (summed)`);
console.log('CPU-s   wall-s  procs  file');
for (const [f, e] of rows.slice(0, top))
  console.log(
    `${e.cpu.toFixed(1).padStart(6)}  ${e.wall.toFixed(1).padStart(6)}  ${String(e.procs).padStart(5)}  ${f}`,
  );

const leaves = tests.filter((t) => t.nesting > 0 || !/\.test\.(js|ts)$/.test(t.name));
leaves.sort((a, b) => (b.ms ?? 0) - (a.ms ?? 0));
console.log(`\nslowest tests (wall ms):`);
for (const t of leaves.slice(0, top * 2))
  console.log(
    `${String(Math.round(t.ms ?? 0)).padStart(7)}  ${t.file ? short(t.file) : ''}  ${'  '.repeat(t.nesting)}${t.name}`,
  );
