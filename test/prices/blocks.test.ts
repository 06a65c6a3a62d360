import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import pino from 'pino';
import { useTestApp } from '../helpers/app.js';
import { buildAllPriceBlocks, buildPriceBlocks } from '../../src/prices/trends/blocks.js';
import { FULL_PASS_EVERY_MS } from '../../src/prices/passes.js';
import { blocksRun } from '../../src/prices/trends/job.js';
import { account, competitor, insertObservations, type Headers } from './history-support.js';

/**
 * Who builds the trends' blocks of whole days (migrations/0022, docs/prices/TRENDS.md "Blocks"):
 * the background task's passes over every product, in short batches, only blocks that have
 * ended, only the missing ones. What they hold is test/prices/trends-exact.test.ts's.
 */

const DAY = 86_400_000;

describe('trends: the blocks of whole days are built', () => {
  const t = useTestApp();
  let headers: Headers;
  let accountId: string;
  const products: string[] = [];

  const blocks = async () =>
    (
      await t.rt.db.query<{ product_id: string; block: Date }>(
        `select product_id, block from price_blocks where account_id = $1 order by product_id, block`,
        [accountId],
      )
    ).rows.map((r) => `${r.product_id} ${new Date(r.block).toISOString().slice(0, 10)}`);

  before(async () => {
    let productId: string;
    ({ headers, accountId, productId } = await account(t));
    products.push(productId);
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers,
        payload: { name: `p${i}`, base_price: 10, currency: 'EUR' },
      });
      products.push((JSON.parse(res.body) as { id: string }).id);
    }
    const comp = await competitor(t, headers);
    // 2025-03-05, 2025-03-20 and today (the block in progress: never built).
    for (const p of products)
      await insertObservations(t, accountId, p, [
        { competitor: comp, price: '10.0000', at: '2025-03-05T10:00:00Z' },
        { competitor: null, price: '11.0000', at: '2025-03-20T10:00:00Z' },
        { competitor: comp, price: '12.0000', at: new Date(Date.now() - 1000).toISOString() },
      ]);
  });

  it('a pass builds every product in batches, and a second one finds nothing to do', async () => {
    const seen: number[] = [];
    let batches = 0;
    const pass = await buildAllPriceBlocks(t.rt.db, {
      before: new Date(),
      batchProducts: 2,
      stop: () => {
        seen.push(batches++);
        return false;
      },
    });
    assert.ok(pass.products >= 3 && pass.rows >= 6, JSON.stringify(pass));
    assert.ok(seen.length >= 2, 'batches of two products');
    const built = await blocks();
    assert.deepEqual(
      built,
      products.sort().flatMap((p) => [`${p} 2025-03-01`, `${p} 2025-03-15`]),
    );
    assert.equal((await buildAllPriceBlocks(t.rt.db, { before: new Date() })).rows, 0);
  });

  it('never builds a block that has not ended, whatever instant it is given', async () => {
    assert.equal(await buildPriceBlocks(t.rt.db, products, new Date(Date.now() + 30 * DAY)), 0);
    assert.ok((await blocks()).every((b) => b.endsWith('2025-03-01') || b.endsWith('2025-03-15')));
  });

  it('a late observation drops its block, which the task builds again; a stopped pass builds nothing', async () => {
    await insertObservations(t, accountId, products[0]!, [
      { competitor: null, price: '9.0000', at: '2025-03-02T10:00:00Z' },
    ]);
    assert.ok(!(await blocks()).includes(`${products[0]} 2025-03-01`));
    const stopped = await buildAllPriceBlocks(t.rt.db, { before: new Date(), stop: () => true });
    assert.deepEqual(stopped, { products: 0, rows: 0 });
    // The task's recent runs look back 10 days only; its first run, at the whole history.
    const run = blocksRun(t.rt.db, pino({ level: 'silent' }), t.clock);
    await run(new AbortController().signal);
    assert.ok((await blocks()).includes(`${products[0]} 2025-03-01`));
  });

  const passState = async () =>
    (
      await t.rt.db.query<{ cursor: string | null; done_at: Date | string | null }>(
        `select cursor, done_at from task_passes where task = 'price-blocks-full'`,
      )
    ).rows[0];
  const silent = pino({ level: 'silent' });
  const late = (p: string, at: string) =>
    insertObservations(t, accountId, p, [{ competitor: null, price: '8.0000', at }]);

  it('the pass over the whole history runs a week after the last one finished, not on every start', async () => {
    const first = await passState();
    assert.equal(first?.cursor, null);
    assert.equal(new Date(first!.done_at!).getTime() <= t.clock.now(), true, 'the first run did the whole history');
    await late(products[1]!, '2025-03-16T10:00:00Z');
    // Another start (a new process): the last 10 days only.
    await blocksRun(t.rt.db, silent, t.clock)(new AbortController().signal);
    assert.ok(!(await blocks()).includes(`${products[1]} 2025-03-15`));
    t.clock.advance(FULL_PASS_EVERY_MS - 60_000);
    await blocksRun(t.rt.db, silent, t.clock)(new AbortController().signal);
    assert.ok(!(await blocks()).includes(`${products[1]} 2025-03-15`), 'not due yet');
    t.clock.advance(60_000);
    await blocksRun(t.rt.db, silent, t.clock)(new AbortController().signal);
    assert.ok((await blocks()).includes(`${products[1]} 2025-03-15`), 'due a week after the last one');
    assert.ok(Math.abs(new Date((await passState())!.done_at!).getTime() - t.clock.now()) < 60_000, 'its end kept');
  });

  it('a pass in progress resumes after its cursor in the next run of any process', async () => {
    const [p0, p1, p2] = [...products].sort();
    await late(p0!, '2025-03-17T10:00:00Z');
    await late(p2!, '2025-03-17T10:00:00Z');
    // As a run stopped after the batch of p0 and p1 leaves it.
    await t.rt.db.query(`update task_passes set cursor = $1 where task = 'price-blocks-full'`, [p1]);
    const stopped = new AbortController();
    stopped.abort();
    await blocksRun(t.rt.db, silent, t.clock)(stopped.signal);
    assert.equal((await passState())?.cursor, p1, 'a stopped run leaves the cursor');
    await blocksRun(t.rt.db, silent, t.clock, { batchProducts: 1 })(new AbortController().signal);
    const built = await blocks();
    assert.ok(built.includes(`${p2} 2025-03-15`), 'after the cursor: built');
    assert.ok(!built.includes(`${p0} 2025-03-15`), 'before the cursor: done by the pass before the stop');
    const state = await passState();
    assert.equal(state?.cursor, null);
    assert.ok(new Date(state!.done_at!).getTime() > t.clock.now() - 60_000, 'finished now');
  });

  it('two processes share a due pass, batch by batch, and finish it once', async () => {
    await late(products[0]!, '2025-03-18T10:00:00Z');
    await late(products[2]!, '2025-03-18T10:00:00Z');
    t.clock.advance(FULL_PASS_EVERY_MS);
    const run = () => blocksRun(t.rt.db, silent, t.clock, { batchProducts: 1 })(new AbortController().signal);
    await Promise.all([run(), run()]);
    const built = await blocks();
    for (const p of products) assert.ok(built.includes(`${p} 2025-03-15`), p);
    const state = await passState();
    assert.equal(state?.cursor, null);
    assert.ok(Math.abs(new Date(state!.done_at!).getTime() - t.clock.now()) < 60_000);
  });

  it('a pass that wrote many block rows analyzes the table, so the read is not planned from empty partitions', async () => {
    // reltuples is -1 until a table is first analyzed (or vacuumed); these few rows are below
    // autovacuum's threshold.
    const tuples = async () => {
      const part = (
        await t.rt.db.query<{ part: string }>(
          `select tableoid::regclass::text as part from price_blocks where account_id = $1 limit 1`,
          [accountId],
        )
      ).rows[0]!.part;
      const r = await t.rt.db.query<{ n: number; rows: number }>(
        `select c.reltuples as n, (select count(*) from price_blocks b where b.tableoid = c.oid) as rows
           from pg_class c where c.oid = $1::regclass`,
        [part],
      );
      return { n: Number(r.rows[0]!.n), rows: Number(r.rows[0]!.rows) };
    };
    await late(products[0]!, '2025-03-19T10:00:00Z');
    t.clock.advance(FULL_PASS_EVERY_MS);
    await blocksRun(t.rt.db, silent, t.clock, { analyzeAfterRows: 1_000_000 })(new AbortController().signal);
    const before = await tuples();
    await late(products[1]!, '2025-03-19T10:00:00Z');
    t.clock.advance(FULL_PASS_EVERY_MS);
    await blocksRun(t.rt.db, silent, t.clock, { analyzeAfterRows: 1 })(new AbortController().signal);
    const after = await tuples();
    assert.equal(before.n, -1, 'not analyzed by a pass that wrote fewer rows');
    assert.deepEqual([after.n, after.rows > 0], [after.rows, true], 'analyzed: the estimate is the count');
  });
});
