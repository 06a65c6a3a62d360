import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { startBackgroundWork } from '../../src/jobs/tasks.js';
import { analyzeStaleParents } from '../../src/db/partitions.js';
import {
  dropObservationsBefore,
  ensureObservationPartitions,
  monthOf,
  OBSERVATION_PARTITIONS,
} from '../../src/prices/partitions/index.js';
import { useTestApp } from '../helpers/app.js';
import { buildPriceBlocks } from '../../src/prices/trends/blocks.js';
import { buildMonthTexts } from '../../src/prices/history/month-texts.js';
import { account, competitor, history, insertObservations, type Headers } from './history-support.js';

/**
 * price_observations' monthly partitions (docs/PRICES.md, "Partitions"): months created ahead by
 * the background task, observations of a month without a partition kept in the default one and
 * given their month later, and retention that drops whole months.
 */

const months = async (t: ReturnType<typeof useTestApp>) =>
  (
    await t.rt.db.query<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = 'price_observations'::regclass order by 1`,
    )
  ).rows.map((r) => r.name);

const partOf = async (t: ReturnType<typeof useTestApp>, productId: string) =>
  (
    await t.rt.db.query<{ part: string; n: number }>(
      `select tableoid::regclass::text as part, count(*)::int as n from price_observations where product_id = $1 group by 1 order by 1`,
      [productId],
    )
  ).rows.map((r) => `${r.part.replace(/^.*\./, '')}:${r.n}`);

describe('price observations: monthly partitions', () => {
  const t = useTestApp();
  let headers: Headers;
  let accountId: string;
  let productId: string;
  let comp: string;

  before(async () => {
    ({ headers, accountId, productId } = await account(t));
    comp = await competitor(t, headers);
  });

  it('months are created ahead, once, however many processes run the task at once', async () => {
    const now = new Date('2031-02-10T12:00:00Z');
    const runs = await Promise.all([1, 2, 3].map(() => ensureObservationPartitions(t.rt.db, now)));
    const created = runs.flatMap((r) => r.created).sort();
    // The hourly and daily aggregates' months (and the trends' blocks', the history's local
    // days' and month texts') are made with the observations' (one partition set).
    assert.deepEqual(created, [
      'price_blocks_p203102',
      'price_blocks_p203103',
      'price_blocks_p203104',
      'price_blocks_p203105',
      'price_day_texts_p203102',
      'price_day_texts_p203103',
      'price_day_texts_p203104',
      'price_day_texts_p203105',
      'price_days_p203102',
      'price_days_p203103',
      'price_days_p203104',
      'price_days_p203105',
      'price_hours_p203102',
      'price_hours_p203103',
      'price_hours_p203104',
      'price_hours_p203105',
      'price_local_days_p203102',
      'price_local_days_p203103',
      'price_local_days_p203104',
      'price_local_days_p203105',
      'price_observations_p203102',
      'price_observations_p203103',
      'price_observations_p203104',
      'price_observations_p203105',
    ]);
    const again = await ensureObservationPartitions(t.rt.db, now);
    assert.deepEqual(again, { created: [], moved: 0 });
    const all = await months(t);
    for (const name of created.filter((n) => n.startsWith('price_observations_'))) assert.ok(all.includes(name), name);
    assert.ok(all.includes('price_observations_default'));
  });

  it('an observation of a month without a partition lands in the default one; its month is made later with the rows moved, nothing tracked twice', async () => {
    const obs = [
      { competitor: comp, price: '10.0000', at: '2019-03-05T10:00:00Z' },
      { competitor: comp, price: '11.0000', at: '2019-03-06T10:00:00Z' },
      { competitor: comp, price: '12.0000', at: '2019-04-01T00:00:00Z' },
    ];
    await insertObservations(t, accountId, productId, obs);
    assert.deepEqual(await partOf(t, productId), ['price_observations_default:3']);
    const q = 'from=2019-03-01T00:00:00Z&to=2019-05-01T00:00:00Z&interval=day&tz=UTC';
    const answer = await history(t, headers, productId, q);
    const changes = Number(
      (
        await t.rt.db.query<{ n: number }>('select count(*)::int as n from price_changes where product_id = $1', [
          productId,
        ])
      ).rows[0]!.n,
    );

    // The trends' blocks of those days (days 1-7 of March and of April), in the default partition too.
    assert.equal(await buildPriceBlocks(t.rt.db, [productId], new Date()), 2);
    // And their month texts (March and April).
    assert.equal(await buildMonthTexts(t.rt.db, [productId], new Date()), 2);
    const r = await ensureObservationPartitions(t.rt.db, new Date('2019-03-20T00:00:00Z'), 1);
    assert.deepEqual(r.created, [
      'price_observations_p201903',
      'price_hours_p201903',
      'price_days_p201903',
      'price_blocks_p201903',
      'price_local_days_p201903',
      'price_day_texts_p201903',
      'price_observations_p201904',
      'price_hours_p201904',
      'price_days_p201904',
      'price_blocks_p201904',
      'price_local_days_p201904',
      'price_day_texts_p201904',
    ]);
    // Three observations, their three hours, their three days of aggregates, their two blocks
    // and their two month texts.
    assert.equal(r.moved, 13);
    const blocks = await t.rt.db.query<{ part: string }>(
      `select tableoid::regclass::text as part from price_blocks where product_id = $1 order by block`,
      [productId],
    );
    assert.deepEqual(
      blocks.rows.map((b) => b.part.replace(/^.*\./, '')),
      ['price_blocks_p201903', 'price_blocks_p201904'],
    );
    assert.deepEqual(await partOf(t, productId), ['price_observations_p201903:2', 'price_observations_p201904:1']);
    assert.deepEqual(await history(t, headers, productId, q), answer);
    assert.equal(
      Number(
        (
          await t.rt.db.query<{ n: number }>('select count(*)::int as n from price_changes where product_id = $1', [
            productId,
          ])
        ).rows[0]!.n,
      ),
      changes,
    );
    // The new month takes new observations directly.
    await insertObservations(t, accountId, productId, [
      { competitor: comp, price: '13.0000', at: '2019-03-07T10:00:00Z' },
    ]);
    assert.deepEqual(await partOf(t, productId), ['price_observations_p201903:3', 'price_observations_p201904:1']);
  });

  it('retention drops whole months and deletes the edge month and the default partition row by row', async () => {
    const other = await account(t);
    const rival = await competitor(t, other.headers);
    await ensureObservationPartitions(t.rt.db, new Date('2018-01-15T00:00:00Z'), 2);
    const obs = [
      ...['2018-01-03', '2018-01-20', '2018-02-10', '2018-03-01', '2018-03-20', '2018-03-25'].map((d, i) => ({
        competitor: rival,
        price: (20 + i).toFixed(4),
        at: `${d}T08:00:00Z`,
      })),
      // No month: in the default partition.
      { competitor: rival, price: '30.0000', at: '2010-06-01T00:00:00Z' },
    ];
    await insertObservations(t, other.accountId, other.productId, obs);
    const before = await months(t);
    assert.ok(before.includes('price_observations_p201801') && before.includes('price_observations_p201803'));

    // Each day's block built (the default partition's 2010 one too): they go with their months,
    // with the days deleted row by row, and with the carry of the day after one (2018-03-20's
    // block: its first day's carry came from 2018-03-01).
    assert.equal(await buildPriceBlocks(t.rt.db, [other.productId], new Date()), 7);
    const r = await dropObservationsBefore(t.rt.db, new Date('2018-03-15T00:00:00Z'), { batchRows: 1 });
    assert.ok(
      r.dropped.includes('price_observations_p201801') && r.dropped.includes('price_observations_p201802'),
      JSON.stringify(r),
    );
    assert.ok(!r.dropped.includes('price_observations_p201803'));
    const left = await t.rt.db.query<{ at: Date }>(
      `select observed_at as at from price_observations where product_id = $1 order by 1`,
      [other.productId],
    );
    assert.deepEqual(
      left.rows.map((x) => new Date(x.at).toISOString()),
      ['2018-03-20T08:00:00.000Z', '2018-03-25T08:00:00.000Z'],
    );
    assert.ok(r.deleted >= 2, 'the 2018-03-01 row and the default partition one, one batch each');
    const blocks = await t.rt.db.query<{ block: Date }>(
      `select block from price_blocks where product_id = $1 order by block`,
      [other.productId],
    );
    assert.deepEqual(
      blocks.rows.map((b) => new Date(b.block).toISOString()),
      ['2018-03-22T00:00:00.000Z'],
    );
    const after = await months(t);
    assert.ok(!after.includes('price_observations_p201801') && after.includes('price_observations_p201803'));
    // Other months (the 2019 ones above) are untouched and a second run finds nothing to do.
    assert.deepEqual(await partOf(t, productId), ['price_observations_p201903:3', 'price_observations_p201904:1']);
    assert.deepEqual(await dropObservationsBefore(t.rt.db, new Date('2018-03-15T00:00:00Z')), {
      cutoff: '2018-03-15T00:00:00.000Z',
      dropped: [],
      deleted: 0,
    });
  });

  it('a month detached and not dropped (a crash between the two steps) is dropped by the next run; other tables are left alone', async () => {
    const relations = async () =>
      (
        await t.rt.db.query<{ name: string }>(
          `select relname as name from pg_class where relkind in ('r', 'p') and relname like any($1) order by 1`,
          [['%\\_p201706', '%\\_parked']],
        )
      ).rows.map((r) => r.name);
    await ensureObservationPartitions(t.rt.db, new Date('2017-06-15T00:00:00Z'), 0);
    // The first step of a run that then died: the month detached from the observations only.
    await t.rt.db.query(`alter table price_observations detach partition price_observations_p201706`);
    // Named like a partition, but not one: never touched.
    await t.rt.db.query(`create table price_observations_parked (id int)`);
    assert.deepEqual(await relations(), [
      'price_blocks_p201706',
      'price_day_texts_p201706',
      'price_days_p201706',
      'price_hours_p201706',
      'price_local_days_p201706',
      'price_observations_p201706',
      'price_observations_parked',
    ]);
    const seen: string[] = [];
    const r = await dropObservationsBefore(t.rt.db, new Date('2017-07-01T00:00:00Z'), {
      onDetached: (range) => seen.push(range.suffix),
    });
    assert.ok(r.dropped.includes('price_observations_p201706'), JSON.stringify(r));
    assert.ok(seen.includes('p201706'), 'the hours, days and blocks of the month were still attached');
    assert.deepEqual(await relations(), ['price_observations_parked']);
    await t.rt.db.query(`drop table price_observations_parked`);
  });

  it('the partitioned tables get statistics of their own once their partitions have some, and again only when their rows move', async () => {
    const db = t.rt.db;
    const parentRows = async () =>
      Number(
        (
          await db.query<{ n: number }>(
            `select reltuples::float8 as n from pg_class where oid = 'price_observations'::regclass`,
          )
        ).rows[0]!.n,
      );
    // Autovacuum's part (and the embedded maintenance's): each partition analysed, never the parent.
    const analyzePartitions = async () => {
      const parts = await db.query<{ name: string }>(
        `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
          where i.inhparent = 'price_observations'::regclass`,
      );
      for (const { name } of parts.rows) await db.query(`analyze ${name}`);
    };
    const other = await account(t);
    const rival = await competitor(t, other.headers);
    await ensureObservationPartitions(db, new Date('2016-05-15T00:00:00Z'), 0);
    const obs = (n: number, day: string) =>
      Array.from({ length: n }, (_, i) => ({
        competitor: rival,
        price: (10 + (i % 7)).toFixed(4),
        at: new Date(Date.parse(`${day}T00:00:00Z`) + i * 60_000).toISOString(),
      }));
    await insertObservations(t, other.accountId, other.productId, obs(300, '2016-05-02'));
    await analyzePartitions();
    const before = await parentRows();

    const first = await analyzeStaleParents(db, OBSERVATION_PARTITIONS);
    assert.ok(first.includes('price_observations'), `${before} rows at the last analyze: ${JSON.stringify(first)}`);
    const counted = await parentRows();
    const total = Number(
      (await db.query<{ n: number }>(`select count(*)::int as n from price_observations`)).rows[0]!.n,
    );
    assert.equal(counted, total, 'the parent counts every partition');
    const stats = await db.query<{ n: number }>(
      `select count(*)::int as n from pg_stats where tablename = 'price_observations' and inherited`,
    );
    assert.ok(Number(stats.rows[0]!.n) > 0, 'column statistics of the whole table');

    // Unchanged: nothing to do.
    assert.deepEqual(await analyzeStaleParents(db, OBSERVATION_PARTITIONS), []);
    // Grown past 50 rows + 10 %: again.
    await insertObservations(t, other.accountId, other.productId, obs(Math.ceil(60 + 0.1 * total), '2016-05-09'));
    await analyzePartitions();
    assert.ok((await analyzeStaleParents(db, OBSERVATION_PARTITIONS)).includes('price_observations'));
  });

  it('monthOf names UTC months', () => {
    assert.deepEqual(monthOf(new Date('2026-12-31T23:59:59.999Z')), {
      name: 'price_observations_p202612',
      from: new Date('2026-12-01T00:00:00Z'),
      to: new Date('2027-01-01T00:00:00Z'),
    });
    assert.equal(monthOf(new Date('2027-01-01T00:00:00Z')).name, 'price_observations_p202701');
  });

  it('the task runs in every process; retention only with PRICE_RETENTION_DAYS', async () => {
    const log = pino({ level: 'silent' });
    const work = await startBackgroundWork(
      { ...t.rt, config: loadConfig({ ...t.storage.env, PRICE_RETENTION_DAYS: '400' }) },
      { api: true, worker: false },
      log,
    );
    await work.stop(0);
    assert.ok(work.tasks.includes('partitions') && work.tasks.includes('price-retention'), work.tasks.join());
    const worker = await startBackgroundWork(
      { ...t.rt, config: loadConfig(t.storage.env) },
      { api: false, worker: true },
      log,
    );
    await worker.stop(0);
    assert.ok(worker.tasks.includes('partitions') && !worker.tasks.includes('price-retention'), worker.tasks.join());
  });
});
