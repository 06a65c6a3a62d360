import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { buildOnlineIndexes } from '../../src/db/online-indexes.js';
import { ensureObservationPartitions } from '../../src/prices/partitions/index.js';
import { OBSERVATION_INDEXES } from '../../src/prices/partitions/indexes.js';
import { useTestApp } from '../helpers/app.js';
import { account, competitor, type Headers, insertObservations } from '../prices/history-support.js';

/**
 * Indexes built online (src/db/online-indexes.ts, docs/SCALING.md "Indexes built online"): a
 * database whose partitions predate migration 0026 gets the covering series index partition by
 * partition, the partitioned table's index turns valid, the series index it replaces goes, and
 * nothing a client reads changes. A failed build is built again; a second run does nothing.
 */

const COVER = 'price_observations_series_cover';
const OLD = 'price_observations_series_time';
const HOUR = 3_600_000;

describe('the covering series index, built online', () => {
  const t = useTestApp();
  let headers: Headers;
  let productId: string;
  let def: string;

  const q = async <T>(sql: string, params: unknown[] = []) => (await t.rt.db.query<T>(sql, params)).rows;
  const valid = async (name: string) =>
    (await q<{ v: boolean }>('select indisvalid as v from pg_index where indexrelid = to_regclass($1)', [name]))[0]?.v;
  /** Each partition of price_observations with the name of its index attached to COVER, if any. */
  const children = async () =>
    q<{ partition: string; child: string | null }>(
      `select c.relname as partition,
              (select x.relname from pg_inherits ii join pg_index i on i.indexrelid = ii.inhrelid
                 join pg_class x on x.oid = i.indexrelid
                where ii.inhparent = to_regclass($1) and i.indrelid = c.oid) as child
         from pg_inherits p join pg_class c on c.oid = p.inhrelid
        where p.inhparent = 'price_observations'::regclass order by 1`,
      [COVER],
    );
  const reads = async () => {
    const out: string[] = [];
    for (const url of [
      `/api/v1/products/${productId}/trends`,
      `/api/v1/products/${productId}/prices?interval=day&from=2025-01-01T00:00:00Z&to=2025-04-01T00:00:00Z`,
      `/api/v1/products/${productId}/prices?interval=raw&from=2025-01-01T00:00:00Z&to=2025-04-01T00:00:00Z`,
    ]) {
      const res = await t.app.inject({ method: 'GET', url, headers });
      assert.equal(res.statusCode, 200, res.body);
      out.push(res.body.replace(/"as_of":"[^"]*"/, ''));
    }
    return out;
  };

  before(async () => {
    ({ headers, productId } = await account(t));
    const comp = await competitor(t, headers);
    // The database as it was before migration 0026: no covering index on any partition.
    def = (await q<{ def: string }>('select pg_get_indexdef(to_regclass($1)) as def', [COVER]))[0]!.def;
    assert.match(def, / ON ONLY /);
    await t.rt.db.query(`drop index ${COVER}`);
    const { accountId } = (
      await q<{ accountId: string }>('select account_id as "accountId" from products where id = $1', [productId])
    )[0]!;
    const rows = [];
    for (let h = 0; h < 24 * 80; h += 7)
      rows.push(
        {
          competitor: comp,
          price: (20 + (h % 5)).toFixed(2),
          at: new Date(Date.UTC(2025, 0, 3) + h * HOUR).toISOString(),
        },
        {
          competitor: null,
          price: (21 + (h % 3)).toFixed(2),
          at: new Date(Date.UTC(2025, 0, 3) + h * HOUR + 60_000).toISOString(),
        },
      );
    await insertObservations(t, accountId, productId, rows);
    await ensureObservationPartitions(t.rt.db);
    // Migration 0026 applied to it.
    await t.rt.db.query(def);
  });

  it("builds every partition's index, makes the table's valid, drops the one it replaces, answers unchanged", async () => {
    assert.equal(await valid(COVER), false);
    assert.equal(await valid(OLD), true);
    const before = await children();
    assert.ok(before.length >= 3, JSON.stringify(before));
    assert.deepEqual(
      before.filter((c) => c.child !== null),
      [],
    );
    const answers = await reads();

    // A build that failed half way (a crash, a cancel) leaves an invalid index under the name.
    const failed = `${COVER}_p202502`;
    await t.rt.db.query(`create index ${failed} on price_observations_p202502 (product_id)`);
    await t.rt.db.query(`update pg_index set indisvalid = false where indexrelid = $1::regclass`, [failed]);

    const [run] = await buildOnlineIndexes(t.rt.db, OBSERVATION_INDEXES);
    assert.equal(run!.index, COVER);
    assert.deepEqual(
      [...run!.built].sort(),
      before.map((c) => `${COVER}_${c.partition.slice('price_observations_'.length)}`).sort(),
    );
    assert.equal(run!.valid, true);
    assert.equal(run!.dropped, true);
    assert.equal(await valid(COVER), true);
    assert.equal(await valid(OLD), undefined);
    const after = await children();
    assert.deepEqual(
      after.filter((c) => c.child === null),
      [],
    );
    // The rebuilt one has the covering definition, not the failed build's.
    const rebuilt = (await q<{ def: string }>('select pg_get_indexdef(to_regclass($1)) as def', [failed]))[0]!.def;
    assert.match(rebuilt, /\(product_id, competitor_id, observed_at\) INCLUDE \(account_id, id, price, currency/);
    assert.deepEqual(await reads(), answers);

    // Nothing left to do; a partition made now gets its index with it.
    assert.deepEqual(await buildOnlineIndexes(t.rt.db, OBSERVATION_INDEXES), [
      { index: COVER, built: [], valid: true, dropped: false },
    ]);
    await ensureObservationPartitions(t.rt.db, new Date(Date.UTC(2031, 5, 1)), 0);
    assert.deepEqual(
      (await children()).filter((c) => c.child === null),
      [],
    );
  });

  it('the series reads use the covering index alone', async () => {
    await t.rt.db.query('vacuum analyze price_observations_p202502');
    // A few hundred rows: without these the planner reads the table's pages instead.
    const rows = await t.rt.db.transaction(async (tx) => {
      await tx.query(`set local enable_seqscan = off`);
      await tx.query(`set local enable_bitmapscan = off`);
      return (
        await tx.query<{ 'QUERY PLAN': string }>(
          `explain select observed_at, id, price, currency, in_stock, samples, price_sum from price_observations_p202502
            where product_id = $1 and account_id is not null and competitor_id is null
              and observed_at >= '2025-02-10' and observed_at < '2025-02-11'`,
          [productId],
        )
      ).rows;
    });
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    assert.match(plan, new RegExp(`Index Only Scan using ${COVER}_p202502`), plan);
  });

  it('two processes building at once: neither fails, and the index is valid after the next run at the latest', async () => {
    const answers = await reads();
    await t.rt.db.query(`drop index ${COVER}`);
    await t.rt.db.query(`create index ${OLD} on price_observations (product_id, competitor_id, observed_at)`);
    await t.rt.db.query(def);
    const partitions = (await children()).length;
    const runs = await Promise.all([
      buildOnlineIndexes(t.rt.db, OBSERVATION_INDEXES),
      buildOnlineIndexes(t.rt.db, OBSERVATION_INDEXES),
    ]);
    const [next] = await buildOnlineIndexes(t.rt.db, OBSERVATION_INDEXES);
    // Every partition built; mostly once, at worst twice (raced for by both, one after the other).
    const built = [...runs.flatMap((r) => r[0]!.built), ...next!.built];
    assert.deepEqual(new Set(built).size, partitions, built.join(', '));
    assert.ok(built.length <= 2 * partitions, built.join(', '));
    assert.equal(next!.valid, true);
    assert.equal(await valid(COVER), true);
    assert.equal(await valid(OLD), undefined);
    assert.deepEqual(
      (await children()).filter((c) => c.child === null),
      [],
    );
    assert.deepEqual(await reads(), answers);
  });
});
