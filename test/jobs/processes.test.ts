import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import type { Database } from '../../src/db/types.js';
import { notifyListingsDue } from '../../src/checks/listing-leases.js';
import { cli } from '../cli/helpers/cli.js';
import { testStorage, type TestStorage, usingPostgres } from '../helpers/database.js';
import {
  type LoggedProcess,
  type LogLine,
  spawnLogged,
  spawnServer,
  waitForLogsAcross,
} from '../helpers/server-process.js';
import { type FixtureSite, startFixtureSite } from '../fixtures/site/server.js';
import { insertListings, MONITORING_ENV } from './support.js';

/** Real processes: `pricehound worker` (PostgreSQL), and the worker inside `pricehound start`. */

const T = { timeout: 120_000 };

const isReady = (l: LogLine) => l.msg === 'pricehound worker ready';
const isCheck = (l: LogLine) => l.msg === 'check finished';

describe('pricehound worker', () => {
  it('refuses to run on the embedded database, saying why, with exit status 2', T, async () => {
    const storage = await testStorage();
    try {
      const r = await cli(['worker'], {
        DATABASE_URL: '',
        DATA_DIR: storage.env.DATA_DIR ?? '/nonexistent/pricehound-test',
      });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /worker command needs DATABASE_URL/);
      assert.match(r.stderr, /pricehound start/);
    } finally {
      await storage.cleanup();
    }
  });
});

describe('two worker processes on PostgreSQL', { skip: !usingPostgres() && 'needs DATABASE_URL' }, () => {
  let storage: TestStorage;
  let db: Database;
  let site: FixtureSite;
  let account: { accountId: string; productId: string };
  const workers: LoggedProcess[] = [];

  before(async () => {
    storage = await testStorage();
    site = await startFixtureSite();
    db = await openDatabase(loadConfig(storage.env), { applicationName: 'pricehound-test' });
    await migrate(db);
    const accountId = await createAccount(db);
    await db.query(
      `insert into products (id, account_id, name, base_price, currency) values ('prod_workers', $1, 'Kettle', 40, 'EUR')`,
      [accountId],
    );
    account = { accountId, productId: 'prod_workers' };
  });
  after(async () => {
    for (const w of workers) if (w.proc.exitCode === null) w.proc.kill('SIGKILL');
    await db?.close();
    await site?.close();
    await storage?.cleanup();
  });

  it('check 200 due listings between them, each exactly once', T, async () => {
    const env = { ...storage.env, ...MONITORING_ENV, LOG_LEVEL: 'debug', WORKER_CONCURRENCY: '16' };
    for (let i = 0; i < 2; i++) workers.push(spawnLogged(['worker'], env));
    await Promise.all(workers.map((w) => w.waitForLogs(1, isReady)));

    // 200 listings due at once, each its own path on the site, then one NOTIFY: both workers
    // wake together and race for them.
    const paths = Array.from({ length: 200 }, (_, i) => `/pages/jsonld-basic.html?listing=${i}`);
    const ids = await insertListings(
      db,
      account.accountId,
      account.productId,
      paths.map((p) => ({ url: site.url + p, intervalSeconds: 3600 })),
    );
    await notifyListingsDue(db);

    // Every check is logged (at debug) by the process that ran it.
    await waitForLogsAcross(workers, 200, isCheck);

    const perWorker = workers.map((w) => w.logs.filter(isCheck).length);
    const checks = await db.query<{ listing_id: string; n: number }>(
      `select listing_id, count(*)::int as n from listing_checks where listing_id = any($1) group by listing_id`,
      [ids],
    );
    assert.equal(checks.rows.length, 200, 'every listing checked');
    assert.deepEqual(
      checks.rows.filter((r) => r.n !== 1),
      [],
      'none checked twice',
    );
    assert.deepEqual(
      paths.filter((p) => site.hits(p) !== 1),
      [],
      'the site saw each page requested exactly once',
    );
    const obs = await db.query<{ n: number }>(
      `select count(*)::int as n from price_observations where listing_id = any($1)`,
      [ids],
    );
    assert.equal(obs.rows[0]!.n, 200);
    const held = await db.query<{ n: number }>(`select count(*)::int as n from listings where locked_by is not null`);
    assert.equal(held.rows[0]!.n, 0);
    assert.equal(
      perWorker.reduce((a, b) => a + b, 0),
      200,
      `checks per worker: ${perWorker.join(' + ')}`,
    );
    assert.ok(
      perWorker.every((n) => n > 0),
      `both workers took a share: ${perWorker.join(' + ')}`,
    );

    for (const w of workers) w.proc.kill('SIGTERM');
    assert.deepEqual(await Promise.all(workers.map(async (w) => (await w.exited).code)), [0, 0]);
  });

  it('SIGTERM during a check: the worker gives the listing back, due at once, and exits 0', T, async () => {
    const w = spawnLogged(['worker'], { ...storage.env, ...MONITORING_ENV, SHUTDOWN_TIMEOUT_MS: '200' });
    workers.push(w);
    await w.waitForLogs(1, isReady);
    const arrived = site.waitForRequests(1, (r) => r.path === '/hold/sigterm');
    const [id] = await insertListings(db, account.accountId, account.productId, [{ url: `${site.url}/hold/sigterm` }]);
    await notifyListingsDue(db);
    await arrived;
    w.proc.kill('SIGTERM');
    assert.equal((await w.exited).code, 0);
    site.release('sigterm');
    const r = await db.query<{ locked_by: string | null; due: boolean; status: string; n: number }>(
      `select locked_by, next_check_at <= now() as due, status, (select count(*)::int from listing_checks where listing_id = $1) as n
         from listings where id = $1`,
      [id],
    );
    assert.deepEqual(r.rows[0], { locked_by: null, due: true, status: 'pending', n: 0 });
    assert.ok(w.logs.some((l) => l.msg === 'gave back the listings of abandoned checks'));
  });
});

describe('pricehound start runs the worker beside the API', () => {
  let storage: TestStorage;
  let site: FixtureSite;
  before(async () => {
    storage = await testStorage();
    site = await startFixtureSite();
  });
  after(async () => {
    await site?.close();
    await storage?.cleanup();
  });

  it('a listing created through the API is checked by the same process', T, async () => {
    const server = await spawnServer({ ...storage.env, ...MONITORING_ENV, LOG_LEVEL: 'debug' });
    try {
      const ready = await server.waitForLog((l) => l.msg === 'pricehound ready');
      assert.equal((ready.worker as { concurrency: number }).concurrency, 16);
      // The server holds DATA_DIR: the CLI makes the key through its owner channel (or PostgreSQL).
      const { key } = await keyFor(storage);
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const product = await fetch(`${server.url}/api/v1/products`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'Grinder', base_price: 99, currency: 'EUR' }),
      });
      assert.equal(product.status, 201);
      const productId = ((await product.json()) as { id: string }).id;
      const listing = await fetch(`${server.url}/api/v1/listings`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ product_id: productId, url: site.pageUrl('og-meta-pl.html') }),
      });
      assert.equal(listing.status, 201, await listing.clone().text());
      const listingId = ((await listing.json()) as { id: string }).id;
      await server.waitForLog((l) => l.msg === 'check finished' && l.listing_id === listingId);
      const got = await fetch(`${server.url}/api/v1/listings/${listingId}`, { headers });
      const body = (await got.json()) as { status: string; last_price: number; last_currency: string };
      assert.deepEqual([body.status, body.last_price, body.last_currency], ['ok', 59.9, 'PLN']);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });
});

async function keyFor(storage: TestStorage): Promise<{ key: string }> {
  const r = await cli(['keys', 'create', '--json', '--plan', 'business'], storage.env);
  if (r.code !== 0) throw new Error(`keys create exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as { key: string };
}
