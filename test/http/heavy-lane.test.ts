import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/http/errors.js';
import { HeavyLane } from '../../src/http/heavy-lane.js';

/** src/http/heavy-lane.ts: a few heavy requests at once per process, one per account, the rest in line. */

/** Work that ends when `finish` is called; `started` resolves when it begins. */
function gate() {
  let finish!: () => void;
  let begin!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  const started = new Promise<void>((r) => (begin = r));
  return { finish, started, work: async () => (begin(), await done, 'ok') };
}

describe('HeavyLane', () => {
  it('runs up to its slots at once, one per account; the next in line starts when one ends, skipping an account already running', async () => {
    const lane = new HeavyLane(2, 10_000, 'previews');
    const order: string[] = [];
    const a1 = gate();
    const a2 = gate();
    const b1 = gate();
    const c1 = gate();
    const runs = [
      lane.run('a', () => (order.push('a1'), a1.work())),
      lane.run('a', () => (order.push('a2'), a2.work())),
      lane.run('b', () => (order.push('b1'), b1.work())),
      lane.run('c', () => (order.push('c1'), c1.work())),
    ];
    await Promise.all([a1.started, b1.started]);
    // a2 waits for a1 (same account) although a slot would be free for it; c1 for a slot.
    assert.deepEqual(order, ['a1', 'b1']);
    b1.finish();
    await c1.started;
    assert.deepEqual(order, ['a1', 'b1', 'c1']);
    a1.finish();
    await a2.started;
    a2.finish();
    c1.finish();
    assert.deepEqual(await Promise.all(runs), ['ok', 'ok', 'ok', 'ok']);
  });

  it('answers 503 with Retry-After to one that waited too long, and lets one whose client left go without running it', async () => {
    const lane = new HeavyLane(1, 50, 'previews');
    const long = gate();
    const first = lane.run('a', long.work);
    await long.started;
    const waited = await lane.run('b', async () => 'ran').catch((e: unknown) => e);
    assert.ok(waited instanceof ApiError);
    assert.equal(waited.status, 503);
    assert.equal(waited.headers?.['Retry-After'], '1');
    const gone = new AbortController();
    let ran = false;
    const leaving = lane.run('c', async () => ((ran = true), 'ran'), gone.signal);
    gone.abort(new Error('client gone'));
    await assert.rejects(leaving, /client gone/);
    long.finish();
    assert.equal(await first, 'ok');
    assert.equal(ran, false);
    // The line is empty again: the next runs at once.
    assert.equal(await lane.run('d', async () => 'next'), 'next');
  });
});
