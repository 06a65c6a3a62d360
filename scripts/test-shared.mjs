// Test files sharing a process (scripts/run-tests.mjs; docs/BENCHMARKS.md, "The test suite's
// CPU"). A test file alone in its node process paid ~3 CPU-s of set-up besides its tests: loading
// the app's ~400 modules and warming them up. Here a few processes share the work: each takes the
// next file from a queue, imports it inside a suite named after it (its hooks, tests and failures
// belong to that suite and name the file) and takes the next one when that suite has ended, so
// files run one after another in a process, never side by side, and the processes end together.
//
// The queue is a directory: file i is taken by whoever creates `i.taken` first (open 'wx' is
// atomic), and `i.done` says its suite ended. The runner reads both afterwards to name a file that
// never ran or whose process ended in it.
import fs from 'node:fs';
import path from 'node:path';
import { after, describe } from 'node:test';
import { pathToFileURL } from 'node:url';

function take(queue, count) {
  for (let i = 0; i < count; i++) {
    try {
      fs.closeSync(fs.openSync(path.join(queue, `${i}.taken`), 'wx'));
      return i;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
  }
  return undefined;
}

/** Runs queued files until none is left; `plan` is the JSON file the runner wrote. */
export async function runShared(plan) {
  const { queue, files } = JSON.parse(fs.readFileSync(plan, 'utf8'));
  const timings = process.env.TEST_TIMINGS;
  for (let i; (i = take(queue, files.length)) !== undefined;) {
    const { compiled, name } = files[i];
    const cpu0 = process.cpuUsage();
    const wall0 = Date.now();
    // Processes the file starts are charged to it in a timed run (scripts/test-timing/report.mjs).
    if (timings) process.env.TEST_TIMINGS_FILE = name;
    await new Promise((resolve) => {
      describe(name, async () => {
        try {
          await import(pathToFileURL(compiled).href);
        } finally {
          // Registered last, so it runs after the file's own `after` hooks. When one of those
          // throws, node runs no later one: this process then ends here, and the runner names
          // this file and those never taken.
          after(() => {
            fs.writeFileSync(path.join(queue, `${i}.done`), '');
            if (timings) record(timings, name, cpu0, wall0);
            resolve();
          });
        }
      });
    });
  }
  if (timings) delete process.env.TEST_TIMINGS_FILE;
}

function record(dir, file, cpu0, wall0) {
  const cpu = process.cpuUsage(cpu0);
  const line = {
    file,
    shared: process.pid,
    user_ms: cpu.user / 1000,
    sys_ms: cpu.system / 1000,
    wall_ms: Date.now() - wall0,
  };
  try {
    fs.appendFileSync(path.join(dir, 'cpu.jsonl'), `${JSON.stringify(line)}\n`);
  } catch {
    // a timing is never worth a failed test
  }
}
