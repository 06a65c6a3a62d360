import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';
import type { WebhookMaybeSecret } from '../helpers/api-types.js';

/** Helpers of the webhooks API tests (not a test file itself). */

export type Headers = Record<string, string>;

export type { Page } from '../helpers/api-types.js';

export const WEBHOOK_KEYS = [
  'created_at',
  'description',
  'disabled_reason',
  'enabled',
  'event_types',
  'format',
  'id',
  'object',
  'updated_at',
  'url',
];

/** A receiver URL on loopback: nothing listens there, and the API tests send nothing. */
export const RECEIVER = 'http://127.0.0.1:9/hooks';

export function call(
  t: TestApp,
  headers: Headers,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  payload?: unknown,
) {
  return t.app.inject({
    method,
    url: /^\/(api\/)?v1\//.test(url) ? url : `/api/v1${url}`,
    headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

export async function createWebhook(
  t: TestApp,
  headers: Headers,
  body: Record<string, unknown> = {},
): Promise<WebhookMaybeSecret> {
  const res = await call(t, headers, 'POST', '/webhooks', { url: RECEIVER, ...body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<WebhookMaybeSecret>();
}

/** The secret's promised shape: `whsec_` + base64 of 24 to 64 bytes. */
export function assertSecret(secret: unknown): void {
  assert.equal(typeof secret, 'string');
  const s = secret as string;
  assert.match(s, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
  const bytes = Buffer.from(s.slice('whsec_'.length), 'base64');
  assert.equal(bytes.toString('base64'), s.slice('whsec_'.length), 'canonical base64');
  assert.ok(bytes.length >= 24 && bytes.length <= 64, `${bytes.length} bytes`);
}
