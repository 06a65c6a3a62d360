import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import pino from 'pino';
import { type PeriodicTask, startPeriodic } from '../../src/jobs/periodic.js';

/**
 * The periodic runner on mocked timers: the test moves the clock (mock.timers.tick) and settles
 * each run itself, so every order of events is fixed, not timed.
 */

const FIRST_MS = 100;
const EVERY_MS = 1_000;

/** A promise with its resolve and reject outside. */
function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Runs every promise callback queued so far (setImmediate is not mocked). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The runner's log lines, parsed. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'warn' },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { log, lines };
}

interface Run {
  signal: AbortSignal;
  finish: () => void;
  fail: (err: Error) => void;
}

/** A task whose runs the test ends (`finish`, `fail`); `runs` lists them as they start. */
function startHeld(log = capture().log) {
  const runs: Run[] = [];
  let active = 0;
  let maxActive = 0;
  const task: PeriodicTask = startPeriodic({
    name: 'test-task',
    title: 'test task',
    everyMs: EVERY_MS,
    firstAfterMs: FIRST_MS,
    log,
    async run(signal) {
      const d = deferred();
      runs.push({ signal, finish: d.resolve, fail: d.reject });
      maxActive = Math.max(maxActive, ++active);
      try {
        await d.promise;
      } finally {
        active--;
      }
    },
  });
  return { task, runs, maxActive: () => maxActive };
}

describe('periodic tasks', () => {
  let stopAfter: PeriodicTask | undefined;
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'setInterval'] }));
  afterEach(async () => {
    await stopAfter?.stop();
    stopAfter = undefined;
    mock.timers.reset();
  });

  it('runs first after firstAfterMs, then every everyMs', async () => {
    const { task, runs } = startHeld();
    stopAfter = task;
    mock.timers.tick(FIRST_MS - 1);
    assert.equal(runs.length, 0);
    mock.timers.tick(1);
    assert.equal(runs.length, 1);
    runs[0]!.finish();
    await settle();
    mock.timers.tick(EVERY_MS - 1);
    assert.equal(runs.length, 1);
    mock.timers.tick(1);
    assert.equal(runs.length, 2);
    runs[1]!.finish();
    await settle();
    mock.timers.tick(EVERY_MS);
    assert.equal(runs.length, 3);
    runs[2]!.finish();
  });

  it('never overlaps itself: turns that come while a run is going are skipped', async () => {
    const { task, runs, maxActive } = startHeld();
    stopAfter = task;
    mock.timers.tick(FIRST_MS);
    assert.equal(runs.length, 1);
    mock.timers.tick(EVERY_MS * 5);
    await settle();
    assert.equal(runs.length, 1, 'no second run while the first is going');
    runs[0]!.finish();
    await settle();
    mock.timers.tick(EVERY_MS);
    assert.equal(runs.length, 2, 'the next turn runs again');
    runs[1]!.finish();
    assert.equal(maxActive(), 1);
  });

  it('stop() aborts the run in progress, waits for it to end, and no run follows', async () => {
    const { task, runs } = startHeld();
    mock.timers.tick(FIRST_MS);
    const events: string[] = [];
    const stopped = task.stop().then(() => events.push('stopped'));
    await settle();
    assert.equal(runs[0]!.signal.aborted, true, 'the run is told to end early');
    assert.equal(events.length, 0, 'stop() waits for the run');
    events.push('run ended');
    runs[0]!.finish();
    await stopped;
    assert.deepEqual(events, ['run ended', 'stopped']);
    mock.timers.tick(EVERY_MS * 3);
    assert.equal(runs.length, 1);
  });

  it('stop() before the first run: it never runs', async () => {
    const { task, runs } = startHeld();
    await task.stop();
    mock.timers.tick(FIRST_MS + EVERY_MS * 3);
    assert.equal(runs.length, 0);
  });

  it('a run that fails is logged and the task runs again at its next turn', async () => {
    const { log, lines } = capture();
    const { task, runs } = startHeld(log);
    stopAfter = task;
    mock.timers.tick(FIRST_MS);
    runs[0]!.fail(new Error('database down'));
    await settle();
    assert.deepEqual(
      lines.map((l) => [l.level, l.component, l.msg, (l.err as { message?: string } | undefined)?.message]),
      [[40, 'test-task', 'test task failed; will retry', 'database down']],
    );
    mock.timers.tick(EVERY_MS);
    assert.equal(runs.length, 2);
    runs[1]!.finish();
    await settle();
    assert.equal(lines.length, 1, 'a run that succeeds logs nothing');
  });

  it('a run that throws before its first await is caught the same way', async () => {
    const { log, lines } = capture();
    let calls = 0;
    stopAfter = startPeriodic({
      name: 'sync-throw',
      title: 'sync throw',
      everyMs: EVERY_MS,
      log,
      run: () => {
        calls++;
        throw new Error(`bug ${calls}`);
      },
    });
    mock.timers.tick(EVERY_MS);
    await settle();
    mock.timers.tick(EVERY_MS);
    await settle();
    assert.equal(calls, 2);
    assert.deepEqual(
      lines.map((l) => (l.err as { message?: string }).message),
      ['bug 1', 'bug 2'],
    );
  });
});
