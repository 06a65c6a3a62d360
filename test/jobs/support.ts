import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import pino from 'pino';
import type { Queryable } from '../../src/db/types.js';
import { newId } from '../../src/ids.js';
import { type CheckFinished, CheckWorker, type CheckWorkerOptions } from '../../src/checks/worker.js';
import { createKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { buildApp } from '../../src/app.js';
import { createRuntime } from '../../src/runtime.js';
import type { TestApp } from '../helpers/app.js';
import { testStorage } from '../helpers/database.js';
import { type FixtureSite, startFixtureSite } from '../fixtures/site/server.js';

/** Helpers shared by the scheduler and check tests (not a test file itself: no `.test.ts`). */

/**
 * Checks may reach the fixture site on 127.0.0.1 and nothing else; one domain, so no per-domain
 * delay (it would only slow the tests down).
 */
export const MONITORING_ENV = {
  ALLOW_LOOPBACK_TARGETS: 'true',
  FETCH_DOMAIN_DELAY_MS: '0',
  FETCH_DOMAIN_CONCURRENCY: '100',
  FETCH_TIMEOUT_MS: '5000',
};

export interface MonitoringTest extends TestApp {
  site: FixtureSite;
  /** An account with a key, and one product in it (created through the API). */
  account: { accountId: string; headers: Record<string, string>; productId: string };
}

/**
 * useTestApp (one app per file on its own storage, see test/helpers/app.ts) plus the fixture
 * site and an account with a product. One hook does it all: node 20 runs a file's top-level
 * before() hooks concurrently, so a second hook could not count on the app being there.
 */
export function useMonitoringTest(env: Record<string, string> = {}): MonitoringTest {
  const t = {} as MonitoringTest;
  before(async () => {
    t.storage = await testStorage();
    const config = loadConfig({ AUTH_FAILURE_LIMIT: '100000', ...MONITORING_ENV, ...t.storage.env, ...env });
    t.rt = await createRuntime(config, pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }));
    t.app = await buildApp(t.rt);
    await t.app.ready();
    t.newKey = async (plan = 'free', accountId) => {
      const k = await createKey(t.rt.db, { plan, accountId: accountId ?? null });
      return {
        key: k.key,
        keyId: k.id,
        accountId: k.account_id,
        headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
      };
    };
    t.site = await startFixtureSite();
    const k = await t.newKey('business');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: k.headers,
      payload: { name: 'Espresso machine', base_price: 499, currency: 'EUR', sku: 'ESP-1' },
    });
    assert.equal(res.statusCode, 201, res.body);
    t.account = { accountId: k.accountId, headers: k.headers, productId: res.json<{ id: string }>().id };
  });
  after(async () => {
    await t.app?.close();
    await t.rt?.close();
    await t.storage?.cleanup();
    await t.site?.close();
  });
  return t;
}

export interface ListingSeed {
  url: string;
  productId?: string;
  competitorId?: string | null;
  selector?: string | null;
  currencyOverride?: string | null;
  intervalSeconds?: number;
  respectRobots?: boolean;
  renderJs?: boolean;
  enabled?: boolean;
  /** Seconds from now (negative: overdue); default due now. */
  dueIn?: number;
}

/** A competitor of the test account, created through the API. */
export async function createCompetitor(t: MonitoringTest, name = 'Fixture shop'): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/competitors',
    headers: t.account.headers,
    payload: { name, website: t.site.url },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ id: string }>().id;
}

/**
 * Listings written straight into the table: the scheduler tests need hundreds, due at chosen
 * times, which the API (rightly) does not let a client set. Every column is the table's own
 * default unless given.
 */
export async function insertListings(
  db: Queryable,
  accountId: string,
  productId: string,
  seeds: ListingSeed[],
): Promise<string[]> {
  const ids = seeds.map(() => newId('lst'));
  await db.query(
    `insert into listings (id, account_id, product_id, competitor_id, url, selector, currency_override,
                           check_interval_seconds, respect_robots, render_js, enabled, next_check_at)
     select u.id, $1, coalesce(u.product_id, $2), u.competitor_id, u.url, u.selector, u.currency_override,
            u.interval, u.respect_robots, u.render_js, u.enabled, now() + make_interval(secs => u.due_in)
       from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::boolean[],
                   $11::boolean[], $12::boolean[], $13::float8[])
         as u (id, product_id, competitor_id, url, selector, currency_override, interval, respect_robots, render_js, enabled, due_in)`,
    [
      accountId,
      productId,
      ids,
      seeds.map((s) => s.productId ?? null),
      seeds.map((s) => s.competitorId ?? null),
      seeds.map((s) => s.url),
      seeds.map((s) => s.selector ?? null),
      seeds.map((s) => s.currencyOverride ?? null),
      seeds.map((s) => s.intervalSeconds ?? 3600),
      seeds.map((s) => s.respectRobots ?? true),
      seeds.map((s) => s.renderJs ?? false),
      seeds.map((s) => s.enabled ?? true),
      seeds.map((s) => s.dueIn ?? 0),
    ],
  );
  return ids;
}

export async function insertListing(t: MonitoringTest, seed: ListingSeed): Promise<string> {
  const [id] = await insertListings(t.rt.db, t.account.accountId, t.account.productId, [seed]);
  return id!;
}

export interface ListingState {
  status: string;
  consecutive_failures: number;
  last_price: string | null;
  last_currency: string | null;
  in_stock: boolean | null;
  last_error: string | null;
  last_checked_at: Date | null;
  last_success_at: Date | null;
  next_check_at: Date;
  locked_by: string | null;
  locked_until: Date | null;
  check_interval_seconds: number;
  /** next_check_at - now(), in seconds, by the database's clock. */
  due_in: number;
}

export async function listingState(db: Queryable, id: string): Promise<ListingState> {
  const r = await db.query<ListingState>(
    `select status, consecutive_failures, last_price::text as last_price, last_currency, in_stock, last_error,
            last_checked_at, last_success_at, next_check_at, locked_by, locked_until, check_interval_seconds,
            extract(epoch from next_check_at - now())::float8 as due_in
       from listings where id = $1`,
    [id],
  );
  assert.ok(r.rows[0], `listing ${id} exists`);
  return r.rows[0];
}

export async function countRows(
  db: Queryable,
  table: 'listing_checks' | 'price_observations' | 'listings',
  listingId?: string,
): Promise<number> {
  const column = table === 'listings' ? 'id' : 'listing_id';
  const r = await db.query<{ n: number }>(
    `select count(*)::int as n from ${table}${listingId ? ` where ${column} = $1` : ''}`,
    listingId ? [listingId] : [],
  );
  return r.rows[0]!.n;
}

/** Makes a listing due now (a test's "the schedule says now"), leaving everything else. */
export async function makeDue(db: Queryable, id: string): Promise<void> {
  await db.query(`update listings set next_check_at = now() where id = $1`, [id]);
}

/** A worker on the test app's database and fetcher, stopped after the file's tests. */
export function startWorker(t: TestApp, opts: Partial<CheckWorkerOptions> = {}): CheckWorker {
  const worker = new CheckWorker({
    db: t.rt.db,
    fetcher: t.rt.fetcher,
    extractor: t.rt.extractor,
    log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    concurrency: 4,
    pollIntervalMs: 25,
    ...opts,
  });
  after(() => worker.stop(0));
  return worker;
}

/** Resolves with the next finished check of `listingId` (any listing when omitted). */
export function nextCheck(worker: CheckWorker, listingId?: string): Promise<CheckFinished> {
  return new Promise((resolve) => {
    const on = (e: CheckFinished) => {
      if (listingId !== undefined && e.listingId !== listingId) return;
      worker.off('checked', on);
      resolve(e);
    };
    worker.on('checked', on);
  });
}

/** Resolves once `n` checks have finished, with them in order. */
export function checks(worker: CheckWorker, n: number): Promise<CheckFinished[]> {
  const seen: CheckFinished[] = [];
  return new Promise((resolve) => {
    const on = (e: CheckFinished) => {
      seen.push(e);
      if (seen.length < n) return;
      worker.off('checked', on);
      resolve(seen);
    };
    worker.on('checked', on);
  });
}
