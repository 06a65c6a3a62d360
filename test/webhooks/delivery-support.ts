import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import pino from 'pino';
import type { Config } from '../../src/config.js';
import type { Database } from '../../src/db/types.js';
import { createDeliveryWorker } from '../../src/webhooks/delivery/start.js';
import type { AttemptOutcome } from '../../src/webhooks/delivery/outcome.js';
import type { DeliveryWorker } from '../../src/webhooks/delivery/worker.js';
import type { TestApp } from '../helpers/app.js';
import type { WebhookMaybeSecret } from '../helpers/api-types.js';

/** Helpers of the delivery tests (not a test file itself). */

export type Headers = Record<string, string>;

export const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/** The settings every delivery test runs with: loopback receivers, a schedule in milliseconds. */
export const DELIVERY_ENV = {
  ALLOW_LOOPBACK_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '40,40,40,40,40',
  WEBHOOK_RETRY_JITTER_PERCENT: '0',
  WEBHOOK_TIMEOUT: '2s',
};

export const newSecret = () => `whsec_${crypto.randomBytes(32).toString('base64')}`;

/** A webhook endpoint of the account, made through POST /api/v1/webhooks. */
export async function createEndpoint(
  t: TestApp,
  key: { headers: Headers; accountId: string },
  body: { url: string; event_types?: string[]; format?: string },
): Promise<WebhookMaybeSecret & { secret: string }> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: key.headers, payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** Causes `n` events (product.created), in one transaction; answers the products' ids in order. */
export async function createProducts(t: TestApp, headers: Headers, n: number, prefix = 'P'): Promise<string[]> {
  const products = Array.from({ length: n }, (_, i) => ({
    name: `${prefix} ${i}`,
    base_price: 10 + i,
    currency: 'EUR',
  }));
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/products/batch', headers, payload: { products } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ data: { product: { id: string } }[] }>().data.map((d) => d.product.id);
}

export async function createProduct(t: TestApp, headers: Headers, name = 'Kettle'): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/products',
    headers,
    payload: { name, base_price: 40, currency: 'EUR' },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ id: string }>().id;
}

export interface AttemptRow {
  id: string;
  event_id: string;
  attempt: number;
  status: string;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  trigger: string;
  duration_ms: number | null;
  next_attempt_at: Date | null;
  attempted_at: Date | null;
}

/** Every attempt to the endpoint, oldest first. */
export async function attempts(db: Database, endpointId: string): Promise<AttemptRow[]> {
  const r = await db.query<AttemptRow>(
    `select id, event_id, attempt, status, response_status, response_body, error, trigger, duration_ms, next_attempt_at, attempted_at
       from webhook_deliveries where endpoint_id = $1 order by created_at, attempt, id`,
    [endpointId],
  );
  return r.rows;
}

/** A delivery worker on the test's database with its settings, `overrides` applied. */
export async function startWorker(
  t: TestApp,
  overrides: Partial<Config> = {},
): Promise<DeliveryWorker & { halt(): Promise<void> }> {
  const { worker, sender } = createDeliveryWorker({ ...t.rt.config, ...overrides }, t.rt.db, log);
  await worker.start();
  return Object.assign(worker, {
    async halt() {
      await worker.stop(1000);
      await sender.close();
    },
  });
}

export const body = (r: { body: string }) =>
  JSON.parse(r.body) as { id: string; type: string; created_at: string; data: Record<string, unknown> };

/** Resolves with the first attempt the worker records that matches. */
export function attempted(
  worker: DeliveryWorker,
  match: (o: AttemptOutcome) => boolean,
  timeoutMs = 20_000,
): Promise<AttemptOutcome> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      worker.off('attempted', on);
      reject(new Error(`no matching attempt within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (o: AttemptOutcome) => {
      if (!match(o)) return;
      clearTimeout(timer);
      worker.off('attempted', on);
      resolve(o);
    };
    worker.on('attempted', on);
  });
}

/** Turns the account's endpoints off, so that the workers of later tests leave them alone. */
export async function retire(t: TestApp, accountId: string): Promise<void> {
  await t.rt.db.query(`update webhook_endpoints set enabled = false where account_id = $1`, [accountId]);
}
