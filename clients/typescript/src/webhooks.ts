import type { Event } from './events.js';

/**
 * Checks a webhook delivery's signature (Standard Webhooks v1, as the service signs): the
 * `webhook-signature` header holds one or more space-separated `v1,<base64 HMAC-SHA256>` of
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the secret's bytes (base64 after `whsec_`);
 * two while a rotated secret still signs. The timestamp must be within `toleranceSeconds` of now
 * (default 5 minutes), which stops replays of an old delivery. Web Crypto only: runs in Node 20+,
 * browsers, Deno and workers.
 */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

export interface VerifyOptions {
  toleranceSeconds?: number;
  /** Unix seconds to check the timestamp against (default: now). */
  now?: number;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string {
  const value =
    headers instanceof Headers
      ? headers.get(name)
      : (Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1] ?? null);
  const one = Array.isArray(value) ? value[0] : value;
  if (!one) throw new WebhookVerificationError(`missing ${name} header`);
  return one;
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** Compares in time that depends on the length only, not on where the first difference is. */
function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/**
 * Resolves with the event (a union on `type`: `event.data` is known once `event.type` is) when
 * one of the signatures is the secret's, else rejects with WebhookVerificationError. Pass the
 * body exactly as received (the raw text or bytes, not re-serialised JSON).
 */
export async function verifyWebhook<T = Event>(
  secret: string,
  body: string | Uint8Array,
  headers: HeaderSource,
  options: VerifyOptions = {},
): Promise<T> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not Unix seconds');
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(timestamp)) > tolerance)
    throw new WebhookVerificationError('webhook-timestamp is too old or in the future');

  let key: Uint8Array;
  try {
    key = fromBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  } catch {
    throw new WebhookVerificationError('the secret is not whsec_ followed by base64');
  }
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix);
  signed.set(bytes, prefix.length);
  const hmacKey = await crypto.subtle.importKey('raw', key as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const expected = new Uint8Array(await crypto.subtle.sign('HMAC', hmacKey, signed));
  const matches = signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) return false;
    try {
      return equal(fromBase64(value), expected);
    } catch {
      return false;
    }
  });
  if (!matches) throw new WebhookVerificationError('no signature matches the secret');
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as T;
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
}
