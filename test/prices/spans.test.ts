import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import pino from 'pino';
import { useTestApp } from '../helpers/app.js';
import { buildPriceSpans, utcMidnight } from '../../src/prices/trends/spans.js';
import { SPANS_READ_WITHIN_MS, spansRun } from '../../src/prices/trends/job.js';
import { account, competitor, insertObservations, post, type Headers } from './history-support.js';

/**
 * Who builds the trends' spans of whole days (migrations/0027, docs/prices/TRENDS.md "Spans"):
 * the background task, for today's and tomorrow's UTC midnight, every product, only days that
 * have ended; and what drops them. What they hold is test/prices/trends-exact.test.ts's.
 */

const DAY = 86_400_000;
const silent = pino({ level: 'silent' });

describe('trends: the spans of whole days are built and dropped', () => {
  const t = useTestApp();
  let headers: Headers;
  let accountId: string;
  let comp: string;
  const products: string[] = [];
  const today = utcMidnight(Date.now());
  const tomorrow = new Date(today.getTime() + DAY);
  const daysAgo = (n: number, hour = 10) => new Date(today.getTime() - n * DAY + hour * 3_600_000).toISOString();

  /** `product d1 block..block_end` of the account's span rows (one line per span, whatever its series). */
  const spans = async () =>
    (
      await t.rt.db.query<{ s: string }>(
        `select distinct product_id || ' ' || to_char(d1 at time zone 'UTC', 'YYYY-MM-DD') || ' '
                || case when block = '-infinity' then '-inf' else to_char(block at time zone 'UTC', 'YYYY-MM-DD') end
                || '..' || to_char(block_end at time zone 'UTC', 'YYYY-MM-DD') as s
           from price_spans where account_id = $1 order by 1`,
        [accountId],
      )
    ).rows.map((r) => r.s);
  const of = (list: string[], p: string, d1: Date) =>
    list.filter((s) => s.startsWith(`${p} ${d1.toISOString().slice(0, 10)} `));

  before(async () => {
    let productId: string;
    ({ headers, accountId, productId } = await account(t));
    products.push(productId);
    for (const name of ['p1', 'unread'])
      products.push((await post(t, headers, '/api/v1/products', { name, base_price: 10, currency: 'EUR' })).id);
    comp = await competitor(t, headers);
    // A day in each span of today's and tomorrow's midnight, and today.
    for (const p of products)
      await insertObservations(t, accountId, p, [
        ...[400, 250, 100, 60, 15, 3].map((n, i) => ({
          competitor: i % 2 ? null : comp,
          price: `${10 + i}.0000`,
          at: daysAgo(n),
        })),
        { competitor: comp, price: '13.0000', at: new Date(Date.now() - 1000).toISOString() },
      ]);
  });

  const read = async (p: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/products/${p}/trends`, headers });
    assert.equal(res.statusCode, 200, res.body);
    return JSON.parse(res.body) as unknown;
  };

  it("the task builds today's and tomorrow's spans of every product whose trends were read, cut at the edge days; a second run builds none", async () => {
    for (const p of products.slice(0, 2)) await read(p);
    await spansRun(t.rt.db, silent, t.clock, { batchProducts: 1 })(new AbortController().signal);
    const built = await spans();
    const iso = (n: number) => new Date(today.getTime() - n * DAY).toISOString().slice(0, 10);
    assert.deepEqual(of(built, products[2]!, today), [], 'a product nobody read has none');
    for (const p of products.slice(0, 2)) {
      assert.deepEqual(
        of(built, p, today),
        [
          `${p} ${today.toISOString().slice(0, 10)} ${iso(29)}..${iso(7)}`,
          `${p} ${today.toISOString().slice(0, 10)} ${iso(364)}..${iso(180)}`,
          `${p} ${today.toISOString().slice(0, 10)} ${iso(6)}..${iso(1)}`,
          `${p} ${today.toISOString().slice(0, 10)} ${iso(89)}..${iso(30)}`,
          `${p} ${today.toISOString().slice(0, 10)} ${iso(179)}..${iso(90)}`,
          `${p} ${today.toISOString().slice(0, 10)} -inf..${iso(365)}`,
        ].sort(),
      );
      // Tomorrow's are cut a day later; the newest ends at today's midnight, so it holds yesterday.
      assert.ok(of(built, p, tomorrow).includes(`${p} ${tomorrow.toISOString().slice(0, 10)} ${iso(5)}..${iso(0)}`));
      assert.equal(of(built, p, tomorrow).length, 6);
    }
    const again = await t.rt.db.query<{ n: number }>(
      `select price_spans_build($1, $2, array[1, 7, 30, 90, 180, 365]) as n`,
      [products.slice(0, 2), today.toISOString()],
    );
    assert.equal(Number(again.rows[0]!.n), 0);
  });

  it('never builds a span that has not ended: the day after tomorrow has none holding today', async () => {
    const after = new Date(tomorrow.getTime() + DAY);
    assert.ok((await buildPriceSpans(t.rt.db, products, after)) > 0);
    const list = of(await spans(), products[0]!, after);
    // Its newest span would be [today - 4, tomorrow): not ended, not built.
    assert.equal(list.length, 5, list.join('\n'));
    assert.ok(list.every((s) => !s.endsWith(`..${tomorrow.toISOString().slice(0, 10)}`)));
    // And it dropped the spans of midnights before its previous one (today's), not tomorrow's.
    assert.equal(of(await spans(), products[0]!, today).length, 0);
    assert.equal(of(await spans(), products[0]!, tomorrow).length, 6);
    await t.rt.db.query(`delete from price_spans where account_id = $1`, [accountId]);
    await spansRun(t.rt.db, silent, t.clock)(new AbortController().signal);
  });

  it('a late observation in a span drops every span of its product and midnight, which the next run builds again', async () => {
    await insertObservations(t, accountId, products[0]!, [{ competitor: null, price: '9.0000', at: daysAgo(50) }]);
    const left = await spans();
    assert.equal(of(left, products[0]!, today).length, 0, 'today: day 50 lies in a span');
    assert.equal(of(left, products[0]!, tomorrow).length, 0, 'tomorrow: the same');
    assert.equal(of(left, products[1]!, today).length, 6, "another product's stay");
    await spansRun(t.rt.db, silent, t.clock)(new AbortController().signal);
    assert.equal(of(await spans(), products[0]!, today).length, 6);
  });

  it("a late observation on today's edge day leaves today's spans and drops tomorrow's, which hold that day", async () => {
    // Yesterday is today's 24-hour edge: in no span of today's midnight, in one of tomorrow's.
    await insertObservations(t, accountId, products[1]!, [{ competitor: null, price: '8.0000', at: daysAgo(1, 23) }]);
    const left = await spans();
    assert.equal(of(left, products[1]!, today).length, 6);
    assert.equal(of(left, products[1]!, tomorrow).length, 0);
  });

  it('an observation of today drops nothing; a competitor deleted drops the spans holding its days', async () => {
    await spansRun(t.rt.db, silent, t.clock)(new AbortController().signal);
    const before = await spans();
    await insertObservations(t, accountId, products[0]!, [
      { competitor: comp, price: '14.0000', at: new Date(Date.now() - 500).toISOString() },
    ]);
    assert.deepEqual(await spans(), before);
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/competitors/${comp}`, headers });
    assert.equal(res.statusCode, 204, res.body);
    // Its day rows went by the cascade, whose delete dropped every span holding one.
    assert.ok(before.length > 0);
    assert.deepEqual(await spans(), []);
  });

  it('a product whose trends nobody read for a week gets no more spans', async () => {
    await t.rt.db.query(`delete from price_spans where account_id = $1`, [accountId]);
    t.clock.advance(SPANS_READ_WITHIN_MS + 60_000);
    await spansRun(t.rt.db, silent, t.clock)(new AbortController().signal);
    assert.deepEqual(await spans(), []);
    await read(products[0]!);
    await spansRun(t.rt.db, silent, t.clock)(new AbortController().signal);
    assert.ok((await spans()).length > 0, 'read again: built');
  });
});
