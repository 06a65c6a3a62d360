import assert from 'node:assert/strict';
import pg from 'pg';
import { createKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import type { Receiver } from '../webhooks/receiver.js';

/** Shared parts of the fault suites (docs/RELIABILITY.md "Faults"). Not a test file itself. */

/** How long the database stays away: FAULT_OUTAGE_S seconds (10; 30 for the long form). */
export const OUTAGE_MS = Number(process.env.FAULT_OUTAGE_S ?? 10) * 1000;

/** Webhook retries every 200 ms, so that an event failed by the outage is retried soon after it. */
export const FAST_RETRIES = {
  ALLOW_LOOPBACK_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 12 }, () => '200ms').join(','),
  WEBHOOK_RETRY_JITTER_PERCENT: '0',
};

export interface Answer {
  status: number;
  ms: number;
  at: number;
  headers: Headers;
  body: { id?: string; code?: string; error?: unknown; request_id?: string } | null;
}

export type Call = (method: string, path: string, body?: object) => Promise<Answer>;

/** Calls `/api/v1<path>` with `key`, at `base()` (so that callers may spread requests over processes). */
export function apiCaller(base: () => string, key: string): Call {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  return async (method, path, body) => {
    const t0 = Date.now();
    const res = await fetch(`${base()}/api/v1${path}`, {
      method,
      headers,
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return {
      status: res.status,
      ms: Date.now() - t0,
      at: t0,
      headers: res.headers,
      body: text ? (JSON.parse(text) as Answer['body']) : null,
    };
  };
}

export interface Writers {
  /** Every answer so far, in the order they came. */
  answers: Answer[];
  /** Stops the writers and waits for their last requests. */
  stop(): Promise<void>;
}

/** `n` writers creating products (`POST /products`) one after another until stopped. */
export function startWriters(n: number, call: Call, name: string): Writers {
  const answers: Answer[] = [];
  let writing = true;
  let i = 0;
  const loops = Array.from({ length: n }, async () => {
    while (writing)
      answers.push(await call('POST', '/products', { name: `${name} ${i++}`, base_price: 10, currency: 'EUR' }));
  });
  return {
    answers,
    async stop() {
      writing = false;
      await Promise.all(loops);
    },
  };
}

/** Resolves once `cond` holds (checked every 20 ms); rejects naming `what` after `ms`. */
export async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Requests sent a second after the database went away (`downAt`) and answered before it was
 * back (`upAt`) are all 503s in our error shape, within the pool's 5 s connect timeout; every
 * answer of the run is a 201 or a 503; the first 201 after `upAt` came within 30 s.
 */
export function assertOutageAnswers(answers: Answer[], downAt: number, upAt: number) {
  const during = answers.filter((a) => a.at > downAt + 1_000 && a.at + a.ms < upAt);
  assert.ok(during.length >= 10, `requests during the outage: ${during.length}`);
  assert.deepEqual([...new Set(during.map((a) => a.status))], [503]);
  for (const a of during) {
    assert.equal(a.body?.code, 'unavailable');
    assert.match(String(a.body?.request_id), /^req_/);
  }
  const slowest = Math.max(...during.map((a) => a.ms));
  assert.ok(slowest <= 6_000, `503s within the pool's 5 s connect timeout: slowest ${slowest} ms`);
  assert.ok(
    answers.every((a) => a.status === 201 || a.status === 503),
    `statuses: ${[...new Set(answers.map((a) => a.status))].join(', ')}`,
  );
  const recoveredIn =
    Math.min(...answers.filter((a) => a.at > upAt && a.status === 201).map((a) => a.at + a.ms)) - upAt;
  assert.ok(recoveredIn < 30_000, `recovered in ${recoveredIn} ms`);
  return { during: during.length, slowest, recoveredIn };
}

export interface Kept {
  acknowledged: number;
  /** Undefined when every acknowledged product's event arrived and succeeded once in the log, else why not. */
  delivered: Promise<string | undefined>;
  /** When the last of those events arrived at the receiver (NaN until `delivered` is settled without error). */
  lastArrivedAt(): number;
}

/**
 * Every product answered 201 exists with one `product.created` event (asserted at once); then,
 * checked apart so that a caller can still report its figures when deliveries fail, each of those
 * events reaches `rx` within 90 s and has exactly one succeeded attempt in `webhook_deliveries`.
 */
export async function checkAcknowledged(databaseUrl: string, answers: Answer[], rx: Receiver): Promise<Kept> {
  const acknowledged = answers.filter((a) => a.status === 201).map((a) => a.body!.id!);
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  let want: string[];
  try {
    const found = await c.query<{ n: number }>('select count(*)::int as n from products where id = any($1::text[])', [
      acknowledged,
    ]);
    assert.equal(found.rows[0]!.n, acknowledged.length, 'every acknowledged product exists');
    const events = await c.query<{ id: string }>(
      `select id from events where type = 'product.created' and data->>'id' = any($1::text[])`,
      [acknowledged],
    );
    assert.equal(events.rows.length, acknowledged.length, 'one product.created per acknowledged product');
    want = events.rows.map((e) => e.id);
  } finally {
    await c.end();
  }
  const arrived = (id: string) => rx.received.find((x) => x.headers['webhook-id'] === id)?.at;
  const delivered = (async () => {
    await rx.until((r) => want.every((id) => r.some((x) => x.headers['webhook-id'] === id)), 90_000);
    // The success is written just after the receiver answered: wait for the log to show it.
    const log = new pg.Client({ connectionString: databaseUrl });
    await log.connect();
    try {
      const succeeded = async () =>
        (
          await log.query<{ event_id: string; n: number }>(
            `select event_id, count(*)::int as n from webhook_deliveries where status = 'succeeded' and event_id = any($1::text[]) group by event_id`,
            [want],
          )
        ).rows;
      let rows = await succeeded();
      for (
        const deadline = Date.now() + 10_000;
        rows.length < want.length && Date.now() < deadline;
        rows = await succeeded()
      ) {
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(rows.length, want.length, 'every event has a succeeded attempt in the delivery log');
      assert.deepEqual(
        rows.filter((r) => r.n !== 1),
        [],
        'each of them succeeded once',
      );
      // Nor any other event (those of products whose 201 was lost to the outage included).
      const twice = await log.query(
        `select event_id from webhook_deliveries where status = 'succeeded' group by event_id having count(*) > 1`,
      );
      assert.deepEqual(twice.rows, [], 'no event succeeded twice');
    } finally {
      await log.end();
    }
  })().then(
    () => undefined,
    (err: unknown) => String(err),
  );
  return {
    acknowledged: acknowledged.length,
    delivered,
    lastArrivedAt: () => Math.max(...want.map((id) => arrived(id) ?? Infinity)),
  };
}

export interface OutageRun {
  answers: Answer[];
  /** When the database was brought back (the call to `fault.start`). */
  upAt: number;
  /** How long `fault.start` took. */
  startMs: number;
  during: number;
  slowest: number;
  recoveredIn: number;
}

/**
 * The outage under load: subscribes `rx` to `product.created`, starts `writers` writers on
 * `call`, and once 20 products are acknowledged takes the database away (`fault.stop`) for
 * OUTAGE_MS, brings it back (`fault.start`) and writes on until a 201 comes after that; then
 * checks the answers (assertOutageAnswers).
 */
export async function writeThroughOutage(
  call: Call,
  rx: Receiver,
  writers: number,
  fault: { stop(): Promise<void>; start(): Promise<void> },
): Promise<OutageRun> {
  const ep = await call('POST', '/webhooks', { url: rx.url, event_types: ['product.created'] });
  assert.equal(ep.status, 201, JSON.stringify(ep.body));
  const w = startWriters(writers, call, 'Outage');
  const { answers } = w;
  try {
    await until(() => answers.filter((a) => a.status === 201).length >= 20, 60_000, '20 products before the outage');
    await fault.stop();
    const downAt = Date.now();
    await new Promise((r) => setTimeout(r, OUTAGE_MS)); // the outage itself: a fixed span of time, not an event to await
    const upAt = Date.now();
    await fault.start();
    const startMs = Date.now() - upAt;
    await until(() => answers.some((a) => a.at > upAt && a.status === 201), 60_000, 'a 201 after PostgreSQL came back');
    await w.stop();
    return { answers, upAt, startMs, ...assertOutageAnswers(answers, downAt, upAt) };
  } finally {
    await w.stop().catch(() => undefined);
  }
}

/** Migrates the database `env` names and makes a business key on it, before any process starts: the key. */
export async function businessKey(env: Record<string, string>): Promise<string> {
  const db = await openDatabase(loadConfig(env));
  try {
    await migrate(db);
    return (await createKey(db, { plan: 'business' })).key;
  } finally {
    await db.close();
  }
}
