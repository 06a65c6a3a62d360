import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { createAccount, createKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { migrate } from '../../src/db/migrate.js';
import type { Queryable } from '../../src/db/types.js';
import { newId } from '../../src/ids.js';
import { createRuntime } from '../../src/runtime.js';
import {
  appliedIds,
  databaseBefore,
  type EarlierDatabase,
  killMidMigration,
  namesAfter,
  partitionRows,
  relkind,
} from './support/populated.js';

/**
 * migrations/0016 moves events and webhook_deliveries into daily partitions. On a database
 * populated under the previous migrations: a process killed in the middle of the move leaves
 * the old tables as they were, and the rerun (to the latest migration) moves every event and
 * delivery once, seqs, ids and all, the waiting mails untouched, and new events fanned out as
 * before.
 */

const PARTITIONED = 16;
// PostgreSQL: the migration waits for the kill (support/populated.ts), so the rows are what the
// checks need. PGlite: the kill, made while rows are copied, must come before the pending
// migrations' one transaction commits; these rows keep that seconds away.
const ROWS = Number(process.env.PARTITION_MIGRATION_ROWS ?? (process.env.DATABASE_URL ? 2_000 : 4_000));
const T = { timeout: 300_000 };

/** Every column of every event, delivery and waiting mail, as hashes. */
async function fingerprint(db: Queryable) {
  const r = await db.query<{ n: number; nd: number; events: string; deliveries: string; mails: string }>(
    `select (select count(*)::int from events) as n,
            (select count(*)::int from webhook_deliveries) as nd,
            (select md5(string_agg(concat_ws('|', seq, id, account_id, type, data::text, created_at), ',' order by seq))
               from events) as events,
            (select md5(string_agg(concat_ws('|', id, account_id, endpoint_id, event_id, event_seq, attempt, trigger, status,
                                             next_attempt_at, response_status, duration_ms, response_body, error, attempted_at,
                                             created_at, retry), ',' order by id))
               from webhook_deliveries) as deliveries,
            (select md5(string_agg(concat_ws('|', subscription_id, event_seq, minute), ',' order by subscription_id, event_seq))
               from email_pending_events) as mails`,
  );
  return r.rows[0]!;
}

describe('migration 0016: events and webhook deliveries into daily partitions', () => {
  let earlier: EarlierDatabase;
  let accountId: string;
  const endpoints = [newId('wh'), newId('wh')];
  const far = [newId('evt', Date.parse('2001-05-05T10:00:00Z')), newId('evt', Date.parse('2040-01-01T00:00:00Z'))];
  let before0016: Awaited<ReturnType<typeof fingerprint>>;

  before(async () => {
    earlier = await databaseBefore(PARTITIONED, async (db) => {
      accountId = await createAccount(db);
      for (const [i, id] of endpoints.entries()) {
        // The second wants only product.updated: half the events get two deliveries.
        await db.query(
          `insert into webhook_endpoints (id, account_id, url, secret, event_types) values ($1, $2, 'http://127.0.0.1:9/h', 'whsec_x', $3)`,
          [id, accountId, i === 0 ? [] : ['product.updated']],
        );
      }
      await db.query(
        `insert into email_subscriptions (id, account_id, address, event_types, confirmed_at, unsubscribe_nonce)
         values ($1, $2, 'ops@example.com', '{product.created}', now(), 'n')`,
        [newId('esub'), accountId],
      );
      // ROWS events over the last 40 days, through the fan-out of the old table.
      await db.query(
        `insert into events (id, account_id, type, data, created_at)
         select 'evt_mig' || g, $1, case g % 2 when 0 then 'product.updated' else 'product.created' end,
                jsonb_build_object('n', g), now() - make_interval(secs => g * (40 * 86400.0 / $2))
           from generate_series(1, $2::int) g`,
        [accountId, ROWS],
      );
      // Far from any day the migration creates: they stay in the default partitions.
      await db.query(
        `insert into events (id, account_id, type, data, created_at)
         values ($2, $1, 'product.updated', '{}', '2001-05-05T10:00:00Z'), ($3, $1, 'product.updated', '{}', '2040-01-01T00:00:00Z')`,
        [accountId, far[0], far[1]],
      );
      // Finished attempts, retries and a deleted event (its deliveries went by the cascade).
      await db.query(
        `update webhook_deliveries set status = 'failed', response_status = 500, error = 'boom', attempted_at = created_at
          where event_seq % 7 = 3`,
      );
      await db.query(
        `insert into webhook_deliveries (id, account_id, endpoint_id, event_id, event_seq, attempt, retry, next_attempt_at)
         select 'whdl_retry' || id, account_id, endpoint_id, event_id, event_seq, 2, 1, now() from webhook_deliveries where status = 'failed'`,
      );
      await db.query(`delete from events where id = 'evt_mig10'`);
      before0016 = await fingerprint(db);
      assert.equal(await relkind(db, 'events'), 'r');
    });
    assert.ok(before0016.n > ROWS * 0.99 && before0016.nd > ROWS * 1.5, JSON.stringify(before0016));
  });
  after(async () => {
    await earlier?.cleanup();
  });

  it(
    'a process killed in the middle of the move leaves the old tables whole; the rerun moves every row once',
    T,
    async () => {
      const killed = await killMidMigration(earlier, {
        table: 'events',
        accountId,
        minCopiedBytes: 256 * 1024,
      });
      process.stdout.write(`# killed mid-migration: ${killed.seen}\n`);

      await earlier.withDb(async (db) => {
        assert.deepEqual(
          (await appliedIds(db)).filter((id) => id >= PARTITIONED),
          [],
          'killed before the migration committed',
        );
        assert.equal(await relkind(db, 'events'), 'r', 'still the old table');
        assert.deepEqual(await fingerprint(db), before0016);
        const started = Date.now();
        assert.deepEqual(await migrate(db), namesAfter(PARTITIONED - 1));
        process.stdout.write(
          `# 0016 and after it: ${before0016.n} events, ${before0016.nd} deliveries in ${Date.now() - started} ms\n`,
        );
        assert.equal(await relkind(db, 'events'), 'p');
        assert.equal(await relkind(db, 'webhook_deliveries'), 'p');
        assert.deepEqual(await fingerprint(db), before0016, 'every row once, every column as it was');
        const mismatched = await db.query(
          `select 1 from webhook_deliveries d left join events e on e.id = d.event_id
            where e.created_at is distinct from d.event_created_at limit 1`,
        );
        assert.equal(mismatched.rows.length, 0, "every delivery carries its event's created_at");
        const byName = await partitionRows(db, 'events');
        assert.equal(byName.get('events_default'), 2, 'the events of 2001 and 2040');
        assert.ok(byName.size >= 40, `a partition per day: ${byName.size}`);
        assert.equal(
          [...byName.values()].reduce((a, b) => a + b, 0),
          before0016.n,
        );
        const dparts = await db.query<{ name: string }>(
          `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
            where i.inhparent = 'webhook_deliveries'::regclass order by 1`,
        );
        assert.deepEqual(
          dparts.rows.map((r) => r.name.replace('webhook_deliveries_', '')),
          [...byName.keys()].map((n) => n.replace('events_', '')),
          'the same days for both tables',
        );
        // No leftovers of the old tables, and no foreign key to events.
        assert.equal((await db.query(`select 1 from pg_class where relname like '%\\_unpartitioned%'`)).rows.length, 0);
        assert.equal(
          (await db.query(`select 1 from pg_constraint where confrelid = 'events'::regclass`)).rows.length,
          0,
        );
      });
    },
  );

  it('after the move: new events get later seqs and are fanned out to webhooks and mail as before', T, async () => {
    const rt = await createRuntime(loadConfig(earlier.storage.env), pino({ level: 'silent' }));
    const app = await buildApp(rt);
    try {
      await app.ready();
      const { key } = await createKey(rt.db, { plan: 'business', accountId });
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const maxBefore = Number((await rt.db.query<{ m: number }>('select max(seq) as m from events')).rows[0]!.m);
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers,
        payload: { name: 'After', base_price: 1, currency: 'EUR' },
      });
      assert.equal(res.statusCode, 201, res.body);
      const ev = (
        await rt.db.query<{ id: string; seq: number; part: string }>(
          `select id, seq, tableoid::regclass::text as part from events where account_id = $1 and type = 'product.created'
            order by seq desc limit 1`,
          [accountId],
        )
      ).rows[0]!;
      assert.ok(Number(ev.seq) > maxBefore, `${ev.seq} > ${maxBefore}`);
      assert.match(ev.part, /events_p\d{8}$/);
      const deliveries = await rt.db.query<{ endpoint_id: string }>(
        `select endpoint_id from webhook_deliveries where event_id = $1 order by endpoint_id`,
        [ev.id],
      );
      assert.deepEqual(
        deliveries.rows.map((r) => r.endpoint_id),
        [endpoints[0]],
        'the endpoint that wants every type, not the product.updated one',
      );
      const mails = await rt.db.query(`select 1 from email_pending_events where event_seq = $1`, [ev.seq]);
      assert.equal(mails.rows.length, 1);
      const got = await app.inject({ method: 'GET', url: `/api/v1/events/${ev.id}`, headers });
      assert.equal(got.statusCode, 200, got.body);
      const old = await app.inject({ method: 'GET', url: `/api/v1/events/${far[0]}`, headers });
      assert.equal(old.statusCode, 200, 'an event of the default partition');
    } finally {
      await app.close();
      await rt.close();
    }
  });
});
