import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ensurePartitions } from '../../src/db/partitions.js';
import { EVENT_PARTITIONS, pruneEvents } from '../../src/events/service.js';
import { newId } from '../../src/ids.js';
import { useTestApp } from '../helpers/app.js';

/**
 * events and webhook_deliveries partitioned by day of the event (migrations/0016, docs/EVENTS.md
 * "Retention"): days created ahead, for both tables at once; an event of a day without a
 * partition kept in the default one and given its day later, deliveries with it; retention that
 * drops whole days only when every event in them is past the window, never a younger event.
 */

type Headers = Record<string, string>;
const t = useTestApp();

const partitions = async (table: string) =>
  (
    await t.rt.db.query<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = $1::regclass order by 1`,
      [table],
    )
  ).rows.map((r) => r.name);

const partOf = async (table: string, where: string, params: unknown[]) =>
  (
    await t.rt.db.query<{ part: string }>(
      `select tableoid::regclass::text as part from ${table} where ${where} order by 1`,
      params,
    )
  ).rows.map((r) => r.part.replace(/^.*\./, ''));

describe('events and deliveries: daily partitions', () => {
  let headers: Headers;
  let accountId: string;
  let endpoint: string;
  let subscription: string;

  /** Events written as if at `at`, one statement (the fan-out queues a delivery and a mail for each). */
  async function eventsAt(times: string[]): Promise<string[]> {
    const ids = times.map((at) => newId('evt', Date.parse(at)));
    await t.rt.db.query(
      `insert into events (id, account_id, type, data, created_at)
       select u.id, $1, 'product.updated', '{}', u.at from unnest($2::text[], $3::timestamptz[]) as u (id, at)`,
      [accountId, ids, times],
    );
    return ids;
  }

  before(async () => {
    ({ headers, accountId } = await t.newKey('business'));
    endpoint = newId('wh');
    await t.rt.db.query(
      `insert into webhook_endpoints (id, account_id, url, secret) values ($1, $2, 'http://127.0.0.1:9/hook', 'whsec_x')`,
      [endpoint, accountId],
    );
    subscription = newId('esub');
    await t.rt.db.query(
      `insert into email_subscriptions (id, account_id, address, event_types, confirmed_at, unsubscribe_nonce)
       values ($1, $2, 'ops@example.com', '{product.updated}', now(), 'n')`,
      [subscription, accountId],
    );
  });

  it('days are created ahead for events and deliveries together, once, however many processes run the task', async () => {
    const now = new Date('2031-02-27T12:00:00Z');
    const runs = await Promise.all([1, 2, 3].map(() => ensurePartitions(t.rt.db, EVENT_PARTITIONS, now)));
    const created = runs.flatMap((r) => r.created).sort();
    const days = ['20310227', '20310228', '20310301', '20310302', '20310303', '20310304', '20310305', '20310306'];
    assert.deepEqual(
      created,
      [...days.map((d) => `events_p${d}`), ...days.map((d) => `webhook_deliveries_p${d}`)].sort(),
    );
    assert.deepEqual(await ensurePartitions(t.rt.db, EVENT_PARTITIONS, now), { created: [], moved: 0 });
    const events = await partitions('events');
    const deliveries = await partitions('webhook_deliveries');
    assert.ok(events.includes('events_default') && deliveries.includes('webhook_deliveries_default'));
    for (const d of days)
      assert.ok(events.includes(`events_p${d}`) && deliveries.includes(`webhook_deliveries_p${d}`), d);
  });

  it('an event of a day without a partition lands in the default one with its delivery; its day is made later with both moved, nothing fanned out twice', async () => {
    const [id] = await eventsAt(['2019-03-05T10:00:00Z']);
    assert.deepEqual(await partOf('events', 'id = $1', [id]), ['events_default']);
    assert.deepEqual(await partOf('webhook_deliveries', 'event_id = $1', [id]), ['webhook_deliveries_default']);
    const get = await t.app.inject({ method: 'GET', url: `/api/v1/events/${id}`, headers });
    assert.equal(get.statusCode, 200, get.body);

    const r = await ensurePartitions(t.rt.db, EVENT_PARTITIONS, new Date('2019-03-05T00:00:00Z'), 0);
    assert.deepEqual(r, { created: ['events_p20190305', 'webhook_deliveries_p20190305'], moved: 2 });
    assert.deepEqual(await partOf('events', 'id = $1', [id]), ['events_p20190305']);
    assert.deepEqual(await partOf('webhook_deliveries', 'event_id = $1', [id]), ['webhook_deliveries_p20190305']);
    const again = await t.app.inject({ method: 'GET', url: `/api/v1/events/${id}`, headers });
    assert.deepEqual(again.json(), get.json(), 'the same event, read from its day');
    const list = await t.app.inject({
      method: 'GET',
      url: `/api/v1/webhooks/${endpoint}/deliveries?event_id=${id}`,
      headers,
    });
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(
      list
        .json<{ data: { event_id: string; event_type: string; attempt: number }[] }>()
        .data.map((d) => [d.event_id, d.event_type, d.attempt]),
      [[id, 'product.updated', 1]],
    );
    // The new day takes the next event of that day directly; a redelivery joins its event's day.
    const [next] = await eventsAt(['2019-03-05T23:59:59.999Z']);
    assert.deepEqual(await partOf('events', 'id = $1', [next]), ['events_p20190305']);
    const redeliver = await t.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${endpoint}/redeliver`,
      headers,
      payload: { event_id: id },
    });
    assert.equal(redeliver.statusCode, 202, redeliver.body);
    assert.deepEqual(await partOf('webhook_deliveries', 'event_id = $1', [id]), [
      'webhook_deliveries_p20190305',
      'webhook_deliveries_p20190305',
    ]);
  });

  it('retention drops a day only when all of it is past the window; younger events, and the day the cutoff falls in, stay', async () => {
    await ensurePartitions(t.rt.db, EVENT_PARTITIONS, new Date('2020-02-10T00:00:00Z'), 6);
    // now 2020-03-15T12:00Z, kept 30 days: the cutoff is 2020-02-14T12:00Z.
    const now = new Date('2020-03-15T12:00:00Z');
    const old = await eventsAt(['2020-02-10T08:00:00Z', '2020-02-13T23:59:59.999Z', '2008-01-01T00:00:00Z']);
    const edge = await eventsAt(['2020-02-14T00:00:00Z', '2020-02-14T12:00:00Z']);
    const young = await eventsAt(['2020-02-14T12:00:00.001Z', '2020-02-15T01:00:00Z', '2020-02-16T10:00:00Z']);
    assert.deepEqual(await partOf('events', 'id = $1', [old[2]]), ['events_default']);
    const pendingMails = async (ids: string[]) =>
      Number(
        (
          await t.rt.db.query<{ n: number }>(
            `select count(*)::int as n from email_pending_events p join events e on e.seq = p.event_seq where e.id = any($1::text[])`,
            [ids],
          )
        ).rows[0]!.n,
      );
    assert.equal(await pendingMails([...old, ...edge, ...young]), 8, 'a waiting mail for each');
    const mailsBefore = Number(
      (
        await t.rt.db.query<{ n: number }>(
          'select count(*)::int as n from email_pending_events where subscription_id = $1',
          [subscription],
        )
      ).rows[0]!.n,
    );

    const r = await pruneEvents(t.rt.db, 30, now);
    assert.equal(r.cutoff, '2020-02-14T12:00:00.000Z');
    for (const d of ['20200210', '20200211', '20200212', '20200213']) assert.ok(r.dropped.includes(`p${d}`), d);
    assert.ok(!r.dropped.includes('p20200214'), 'the cutoff falls in it: kept whole');
    assert.equal(r.deleted, 1, "the default partition's event of 2008");
    const left = await t.rt.db.query<{ id: string }>(`select id from events where id = any($1::text[])`, [
      [...old, ...edge, ...young],
    ]);
    assert.deepEqual(left.rows.map((x) => x.id).sort(), [...edge, ...young].sort());
    const deliveries = await t.rt.db.query<{ event_id: string }>(
      `select event_id from webhook_deliveries where event_id = any($1::text[])`,
      [[...old, ...edge, ...young]],
    );
    assert.deepEqual(deliveries.rows.map((x) => x.event_id).sort(), [...edge, ...young].sort());
    assert.equal(await pendingMails([...edge, ...young]), 5, "the kept events' mails are still waiting");
    const mailsAfter = Number(
      (
        await t.rt.db.query<{ n: number }>(
          'select count(*)::int as n from email_pending_events where subscription_id = $1',
          [subscription],
        )
      ).rows[0]!.n,
    );
    // The 2019 events of the test above are older too: their days went, and their mails.
    assert.ok(mailsAfter <= mailsBefore - 3, `${mailsAfter} <= ${mailsBefore} - 3`);
    const events = await partitions('events');
    assert.ok(!events.includes('events_p20200213') && events.includes('events_p20200214'));
    assert.ok(!(await partitions('webhook_deliveries')).includes('webhook_deliveries_p20200213'));
    const gone = await t.app.inject({ method: 'GET', url: `/api/v1/events/${old[0]}`, headers });
    assert.equal(gone.statusCode, 404, gone.body);

    // Twelve hours later the edge day is wholly past (the cutoff is 2020-02-15T00:00Z): it goes,
    // with young[0], now past the window too; the events of the 15th and 16th stay.
    const later = await pruneEvents(t.rt.db, 30, new Date('2020-03-16T00:00:00Z'));
    assert.deepEqual([later.dropped, later.deleted], [['p20200214'], 0]);
    const kept = await t.rt.db.query<{ id: string }>(`select id from events where id = any($1::text[])`, [
      [...edge, ...young],
    ]);
    assert.deepEqual(kept.rows.map((x) => x.id).sort(), young.slice(1).sort());
    const again = await pruneEvents(t.rt.db, 30, new Date('2020-03-16T00:00:00Z'));
    assert.deepEqual([again.dropped, again.deleted], [[], 0], 'a second run finds nothing');
  });
});
