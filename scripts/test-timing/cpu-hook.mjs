// Loaded into every node process of a timed test run (scripts/run-tests.mjs with TEST_TIMINGS=dir,
// through NODE_OPTIONS=--import): at exit, one line per process in dir/cpu.jsonl with its CPU
// time (all its threads: PGlite's engine thread included), its wall time and its parent, so the
// summary (report.mjs) charges each test file with the servers and CLIs it started.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const dir = process.env.TEST_TIMINGS;
if (dir && isMainThread) {
  const started = performance.timeOrigin;
  process.on('exit', () => {
    const cpu = process.cpuUsage();
    const line = {
      pid: process.pid,
      ppid: process.ppid,
      argv: process.argv.slice(1),
      user_ms: cpu.user / 1000,
      sys_ms: cpu.system / 1000,
      wall_ms: Date.now() - started,
      // Set while a shared test process runs a file (scripts/test-shared.mjs), inherited by what it starts.
      file: process.env.TEST_TIMINGS_FILE,
    };
    try {
      fs.appendFileSync(path.join(dir, 'cpu.jsonl'), `${JSON.stringify(line)}\n`);
    } catch {
      // a timing is never worth a failed test
    }
  });
}
