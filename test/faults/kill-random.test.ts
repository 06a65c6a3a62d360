import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { UNRECORDED_MAX } from '../../src/webhooks/delivery/worker.js';
import { testStorage, type TestStorage, usingPostgres } from '../helpers/database.js';
import {
  type LoggedProcess,
  type ServerProcess,
  spawnLogged,
  spawnServer,
  spawnWorker,
} from '../helpers/server-process.js';
import { type Receiver, startReceiver } from '../webhooks/receiver.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/open.js';
import { prng } from '../helpers/prng.js';
import { businessKey } from './support.js';

/**
 * Fault suite (issue 12, docs/RELIABILITY.md "Faults"): kill -9 at random points, again and
 * again, while writers create products and their `product.created` events are delivered to a
 * webhook receiver. On PostgreSQL an API (`serve`) and a worker process run, and each round kills
 * one of them, chosen at random; on the embedded database one process owns DATA_DIR, so each
 * round kills the `start` process (API and delivery in one). Each kill comes a random time after
 * the writers got going again (seeded PRNG: KILL_SEED replays a run, the seed is printed); the
 * process is started again and the writers go on. In some rounds the replacement is killed too
 * while it starts (migrations, opening DATA_DIR), and another one started. KILL_ROUNDS rounds (3 in the suite; more for the long form).
 * Holds at the end: every product acknowledged with a 201 exists; nothing is stored that was not
 * sent; every event is delivered at least once and succeeds exactly once in webhook_deliveries;
 * nothing is delivered that is not an event of ours.
 */

const ROUNDS = Number(process.env.KILL_ROUNDS ?? 3);
const SEED = process.env.KILL_SEED ? Number(process.env.KILL_SEED) : Math.floor(Math.random() * 2 ** 31);
const WRITERS = 3;
/** A kill comes this long (at random within it) after the writers' first 201s from the fresh process. */
const KILL_AFTER_MS = [100, 1_000] as const;
/**
 * In this share of the rounds the replacement is killed too while it starts (loading, opening
 * DATA_DIR or the pool, migrations): at a random fraction of how long the last start took.
 */
const STARTUP_KILL_SHARE = 0.2;
const ENV = {
  ALLOW_LOOPBACK_TARGETS: 'true',
  // The lease a killed worker leaves on the endpoint is 2 × WEBHOOK_TIMEOUT + 5 s.
  WEBHOOK_TIMEOUT: '1s',
  WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms',
  WEBHOOK_RETRY_JITTER_PERCENT: '0',
};

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

interface Sent {
  name: string;
  /** The product id of a 201; undefined when the request got no answer (the process was killed). */
  id?: string;
  status: number | 'no answer';
}

describe('kill -9 at random points during writes and deliveries', () => {
  let storage: TestStorage;
  let rx: Receiver;
  let key: string;
  let api: ServerProcess | undefined;
  let worker: LoggedProcess | undefined;
  const pg = usingPostgres();
  /** Every process started, so that none outlives a failed run. */
  const spawned: LoggedProcess[] = [];
  const track = async <P extends LoggedProcess>(p: Promise<P>): Promise<P> => {
    const started = await p;
    spawned.push(started);
    return started;
  };

  before(async () => {
    storage = await testStorage();
    key = await businessKey(storage.env);
    rx = await startReceiver();
  });

  after(async () => {
    for (const p of spawned) await p.stop('SIGKILL');
    await rx?.close();
    await storage?.cleanup();
  });

  it(
    `${ROUNDS} rounds: nothing acknowledged lost, every event delivered and succeeded exactly once, nothing invented`,
    { timeout: 120_000 + ROUNDS * 30_000 },
    async () => {
      console.log(
        `# KILL_SEED=${SEED} KILL_ROUNDS=${ROUNDS} (${pg ? 'PostgreSQL: serve + worker' : 'embedded: start'})`,
      );
      const random = prng(SEED);
      const env = { ...storage.env, ...ENV };
      /** How long the last start of each took, for kills in the middle of one. */
      const startMs = { api: 0, worker: 0 };
      const timed = async <P extends LoggedProcess>(kind: 'api' | 'worker', p: () => Promise<P>): Promise<P> => {
        const t0 = Date.now();
        const started = await track(p());
        startMs[kind] = Date.now() - t0;
        return started;
      };
      const startApi = () => timed('api', () => spawnServer(env, [pg ? 'serve' : 'start']));
      const startWorker = () => timed('worker', () => spawnWorker(env));
      [api, worker] = await Promise.all([startApi(), pg ? startWorker() : undefined]);
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const ep = await fetch(`${api.url}/api/v1/webhooks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ url: rx.url, event_types: ['product.created'] }),
      });
      assert.equal(ep.status, 201, await ep.text());

      // Writers: each creates products one after another at whatever API process is up; while it
      // is down they wait for the next one.
      const sent: Sent[] = [];
      let apiUp = Promise.resolve();
      let created = 0;
      let writing = true;
      let n = 0;
      const writers = Array.from({ length: WRITERS }, async () => {
        while (writing) {
          await apiUp;
          const name = `Kill ${n++}`;
          const one: Sent = { name, status: 'no answer' };
          sent.push(one);
          try {
            const res = await fetch(`${api!.url}/api/v1/products`, {
              method: 'POST',
              headers,
              body: JSON.stringify({ name, base_price: 10, currency: 'EUR' }),
            });
            const body = (await res.json()) as { id?: string };
            one.status = res.status;
            if (res.status === 201) {
              one.id = body.id;
              created++;
            }
          } catch {
            // Cut by the kill: not acknowledged (it may or may not have committed).
          }
        }
      });
      const until = async (cond: () => boolean, ms: number, what: string) => {
        const deadline = Date.now() + ms;
        while (!cond()) {
          if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
          await delay(20);
        }
      };

      const rounds: string[] = [];
      try {
        for (let round = 0; round < ROUNDS; round++) {
          const target = pg && random() < 0.5 ? 'worker' : 'api';
          const after = Math.round(KILL_AFTER_MS[0] + random() * (KILL_AFTER_MS[1] - KILL_AFTER_MS[0]));
          const inStartup = random() < STARTUP_KILL_SHARE ? random() : undefined;
          // The writers are going again (at the fresh process, after an API kill)...
          const base = created;
          await until(() => created >= base + WRITERS, 60_000, `round ${round}: writes going on`);
          // ... and the kill comes at a random point in time: a span, not an event to await.
          await delay(after);
          const at = { created, delivered: rx.received.length, t: Date.now() };
          const victim: LoggedProcess = target === 'api' ? api : worker!;
          const down = deferred();
          if (target === 'api') apiUp = down.promise;
          victim.proc.kill('SIGKILL');
          assert.equal((await victim.exited).signal, 'SIGKILL');
          let startupKill = '';
          if (inStartup !== undefined) {
            // A replacement killed while it starts, before or (on a fast start) just after it is ready.
            const doomed = spawnLogged(target === 'api' ? [pg ? 'serve' : 'start'] : ['worker'], {
              PORT: '0',
              HOST: '127.0.0.1',
              ...env,
            });
            spawned.push(doomed);
            const killAt = Math.round(inStartup * startMs[target]);
            const ended = await Promise.race([delay(killAt).then(() => false), doomed.exited.then(() => true)]);
            assert.equal(
              ended,
              false,
              `the replacement exited by itself while starting: ${JSON.stringify(doomed.logs.slice(-3))}`,
            );
            const wasReady = doomed.logs.some((l) => /^Server listening|^pricehound worker ready/.test(String(l.msg)));
            doomed.proc.kill('SIGKILL');
            await doomed.exited;
            startupKill = `, its replacement killed ${killAt} ms into its start (${wasReady ? 'ready by then' : 'not yet ready'})`;
          }
          const fresh: LoggedProcess = await (target === 'api' ? startApi() : startWorker());
          if (target === 'api') api = fresh as ServerProcess;
          else worker = fresh;
          down.resolve();
          rounds.push(
            `${target} after ${after} ms${startupKill} (${at.created} created, ${at.delivered} received; up again in ${Date.now() - at.t} ms)`,
          );
        }
        // A last stretch of writes after the last restart.
        const base = created;
        await until(() => created >= base + WRITERS * 3, 60_000, 'writes after the last restart');
      } finally {
        writing = false;
        await Promise.all(writers);
      }
      console.log(`# kills: ${rounds.join('; ')}`);

      // Every event stored (GET /events: each product.created that committed, acknowledged or
      // not) arrives at the receiver; the lease a killed worker held runs out within 7 s.
      const events = new Map<string, string>(); // event id -> product id
      let cursor: string | null = null;
      do {
        const res: Response = await fetch(`${api.url}/api/v1/events?limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
          headers,
        });
        assert.equal(res.status, 200);
        const page = (await res.json()) as {
          data: { id: string; type: string; data: { id: string } }[];
          pagination: { next_cursor: string | null };
        };
        for (const e of page.data) {
          assert.equal(e.type, 'product.created');
          events.set(e.id, e.data.id);
        }
        cursor = page.pagination.next_cursor;
      } while (cursor);
      const drainFrom = Date.now();
      const received = () => new Set(rx.received.map((r) => String(r.headers['webhook-id'])));
      await rx
        .until(() => [...events.keys()].every((id) => received().has(id)), 60_000)
        .catch((err: unknown) => {
          throw new Error(
            `${String(err)}: ${[...events.keys()].filter((id) => !received().has(id)).length} of ${events.size} events never arrived`,
          );
        });

      const drainedIn = Date.now() - drainFrom;
      // Stop the processes (the embedded database has one owner) and read what they stored.
      const stopped = await Promise.all([api.stop(), worker?.stop()]);
      for (const s of stopped) if (s) assert.equal(s.code, 0, 'a clean stop');
      const db = await openDatabase(loadConfig(storage.env));
      try {
        const acknowledged = sent.filter((s) => s.status === 201);
        const stored = new Map(
          (await db.query<{ id: string; name: string }>('select id, name from products')).rows.map((r) => [
            r.id,
            r.name,
          ]),
        );
        // Every product acknowledged is stored, under its name.
        for (const a of acknowledged) assert.equal(stored.get(a.id!), a.name, `acknowledged ${a.id} (${a.name})`);
        // Nothing stored that was not sent; what else is stored was cut off by a kill, unanswered.
        const unanswered = new Set(sent.filter((s) => s.status === 'no answer').map((s) => s.name));
        const ackIds = new Set(acknowledged.map((a) => a.id));
        for (const [id, name] of stored)
          if (!ackIds.has(id)) assert.ok(unanswered.has(name), `${id} (${name}) stored but never sent or refused`);
        assert.deepEqual(
          sent.filter((s) => s.status !== 201 && s.status !== 'no answer'),
          [],
          'every answer a 201',
        );
        // One product.created per stored product, and no other.
        assert.equal(events.size, stored.size, 'one event per stored product');
        assert.deepEqual([...new Set(events.values())].sort(), [...stored.keys()].sort());

        // Delivered at least once, nothing invented, and each event succeeded exactly once in the log.
        const counts = new Map<string, number>();
        for (const r of rx.received) {
          const id = String(r.headers['webhook-id']);
          counts.set(id, (counts.get(id) ?? 0) + 1);
          assert.ok(events.has(id), `delivered ${id}, which is no event of ours`);
          assert.equal(
            (JSON.parse(r.body) as { data: { id: string } }).data.id,
            events.get(id),
            `${id}: the body is its event`,
          );
        }
        const log = await db.query<{ event_id: string; status: string; n: number }>(
          'select event_id, status, count(*)::int as n from webhook_deliveries group by event_id, status',
        );
        const succeeded = new Map(
          log.rows.filter((r) => r.status === 'succeeded').map((r) => [r.event_id, Number(r.n)]),
        );
        for (const id of events.keys())
          assert.equal(succeeded.get(id), 1, `${id} succeeded ${succeeded.get(id) ?? 0} times in webhook_deliveries`);
        assert.equal(succeeded.size, events.size, 'no other event succeeded');
        const pending = log.rows.filter((r) => r.status === 'pending').reduce((s, r) => s + Number(r.n), 0);
        // A failed attempt (retried, and counted here) is the receiver not answering within WEBHOOK_TIMEOUT on a loaded machine.
        const failedErrors = (
          await db.query<{ error: string | null }>("select error from webhook_deliveries where status = 'failed'")
        ).rows.map((r) => r.error);
        const failed = failedErrors.length;
        assert.equal(pending, 0, 'nothing left pending');
        // Twice at most for those in flight at each kill of the delivering process.
        const twice = [...counts.values()].filter((c) => c > 1).length;
        const deliveringKills = rounds.filter((r) => r.startsWith(pg ? 'worker' : 'api')).length;
        assert.ok(
          twice <= deliveringKills * (UNRECORDED_MAX + 1),
          `${twice} events arrived more than once after ${deliveringKills} kills of the delivering process`,
        );
        console.log(
          `# ${sent.length} sent, ${acknowledged.length} acknowledged (all stored), ${sent.length - acknowledged.length} cut off by a kill (${stored.size - acknowledged.length} of them stored); ` +
            `${events.size} events, each received (${rx.received.length} deliveries, ${twice} events twice) and succeeded once, the last ${drainedIn} ms after the writes; ${failed} failed attempts in the log${failed ? ` (${[...new Set(failedErrors)].join('; ')})` : ''}`,
        );
      } finally {
        await db.close();
      }
    },
  );
});
