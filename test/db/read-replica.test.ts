import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import { createKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { type ReplicaCluster, replicaUnavailable, startReplicaCluster } from '../helpers/replica-cluster.js';

/**
 * DATABASE_READ_URL against a real streaming replica: a PostgreSQL 15 primary and a standby made
 * with initdb and pg_basebackup, each on its own port (test/helpers/replica-cluster.ts), the app
 * on both (src/db/read-replica.ts). The same on either test pass: the clusters are the test's own.
 */
const unavailable = replicaUnavailable();
const LAG_MS = 1000;

describe('a read replica (DATABASE_READ_URL)', { skip: unavailable ? `skipped: ${unavailable}` : false }, () => {
  let cluster: ReplicaCluster;
  let rt: Runtime;
  let app: App;
  let standby: pg.Client;
  let headers: Record<string, string>;
  let accountId: string;
  let product: string;

  /** Runs the lag check until `ok` holds (the replica replays within a second here; 15 s at most). */
  const until = async (what: string, ok: () => boolean) => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      await rt.reads.check();
      if (ok()) return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(rt.reads.state())}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const history = async () => {
    const res = await app.inject({
      method: 'GET',
      url: `/api/v1/products/${product}/prices?interval=raw&from=2026-01-01T00:00:00Z`,
      headers,
    });
    assert.equal(res.statusCode, 200, res.body);
    return (JSON.parse(res.body) as { data: { price: number | string }[] }).data.map((o) => String(o.price));
  };
  const trends = async () => {
    const res = await app.inject({ method: 'GET', url: `/api/v1/products/${product}/trends`, headers });
    assert.equal(res.statusCode, 200, res.body);
    return JSON.parse(res.body) as { object: string; own: { price: string | number; source: string } };
  };
  const replicaReads = () => rt.reads.state().replicaReads;
  /** A price written straight into the primary, as a worker process would: not this process's write. */
  const writeBehindTheApp = async (price: string) => {
    await rt.db.query(
      `/* testReplicaObservation */ insert into price_observations (account_id, product_id, price, currency, in_stock, observed_at, source)
       values ($1, $2, $3, 'EUR', true, now(), 'api')`,
      [accountId, product, price],
    );
  };

  before(async () => {
    cluster = await startReplicaCluster();
    const config = loadConfig({
      DATABASE_URL: cluster.primaryUrl,
      DATABASE_READ_URL: cluster.replicaUrl,
      DATABASE_READ_MAX_LAG: `${LAG_MS}ms`,
      DATABASE_READ_CHECK_INTERVAL: '250ms',
      AUTH_FAILURE_LIMIT: '100000',
    });
    rt = await createRuntime(config, pino({ level: 'silent' }));
    app = await buildApp(rt);
    await app.ready();
    const k = await createKey(rt.db, { plan: 'business' });
    accountId = k.account_id;
    headers = { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' };
    standby = new pg.Client({ connectionString: cluster.replicaUrl });
    await standby.connect();
  });

  after(async () => {
    await standby?.end().catch(() => undefined);
    await app?.close();
    await rt?.close();
    cluster?.stop();
  });

  it("measures the replica as caught up, and a client's reads right after its own write stay on the primary", async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers,
      payload: { name: 'Kettle', base_price: 20, currency: 'EUR' },
    });
    assert.equal(created.statusCode, 201, created.body);
    product = (JSON.parse(created.body) as { id: string }).id;
    const posted = await app.inject({
      method: 'POST',
      url: '/api/v1/prices',
      headers,
      payload: {
        observations: [{ product_id: product, price: 19.5, currency: 'EUR', observed_at: new Date().toISOString() }],
      },
    });
    assert.equal(posted.statusCode, 200, posted.body);
    // The write is this account's, just now: whatever the replica has replayed, the primary answers.
    const before = replicaReads();
    assert.deepEqual(await history(), ['19.5']);
    assert.equal(replicaReads(), before, 'the read right after the write went to the replica');

    // Once the replica has replayed past the write, the account's history reads it, the same answer.
    await until(
      'the replica to replay the write',
      () => rt.reads.state().usable && rt.reads.forAccount(accountId) !== rt.db,
    );
    assert.ok(rt.reads.state().lagMs! <= LAG_MS);
    assert.deepEqual(await history(), ['19.5']);
    assert.equal(replicaReads(), before + 1, 'a caught-up replica was not read');
    const t = await trends();
    assert.equal(t.own.source, 'observation');
    assert.equal(String(t.own.price), '19.5');
    assert.equal(replicaReads(), before + 2);
  });

  it('a replica that falls behind past the bound is not read: its reads go to the primary, and come back once it catches up', async () => {
    await standby.query('select pg_wal_replay_pause()');
    await writeBehindTheApp('18.25');
    // Paused, the replica stays where it was; past the lag bound it is no longer used.
    await until('the replica to count as behind', () => !rt.reads.state().usable);
    const before = replicaReads();
    assert.deepEqual(await history(), ['19.5', '18.25'], 'a stale replica answered');
    assert.equal(replicaReads(), before);

    await standby.query('select pg_wal_replay_resume()');
    await until('the replica to catch up', () => rt.reads.state().usable && rt.reads.forAccount(accountId) !== rt.db);
    assert.deepEqual(await history(), ['19.5', '18.25']);
    assert.equal(replicaReads(), before + 1);
  });

  it('a replica that goes away: the read that finds it gone is answered by the primary, and later reads go there', async () => {
    await until('a usable replica', () => rt.reads.state().usable && rt.reads.forAccount(accountId) !== rt.db);
    // Taken while the replica was usable: its next query meets the stopped replica.
    const routed = rt.reads.forAccount(accountId);
    await standby.end();
    cluster.stopReplica();
    const fallbacks = rt.reads.state().fallbacks;
    const r = await routed.query<{ n: number }>(
      '/* testReplicaGone */ select count(*)::int8 as n from price_observations where product_id = $1',
      [product],
    );
    assert.equal(r.rows[0]!.n, 2);
    assert.equal(rt.reads.state().fallbacks, fallbacks + 1, 'the query did not try the replica and fall back');
    assert.equal(rt.reads.state().usable, false);
    assert.deepEqual(await history(), ['19.5', '18.25']);
    const reads = replicaReads();
    assert.equal(String((await trends()).own.price), '18.25');
    assert.equal(replicaReads(), reads);
    await rt.reads.check();
    assert.equal(rt.reads.state().usable, false);
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200, ready.body);
  });
});
