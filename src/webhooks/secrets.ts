import crypto from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
/** A secret inside other text, URL-encoded or not: what the request log redacts. */
export const SECRET_IN_TEXT = /whsec_(?:[A-Za-z0-9+/=]|%[0-9A-Fa-f]{2})+/g;

/**
 * A new signing secret, as Standard Webhooks writes them: `whsec_` + base64 of 32 random bytes.
 * The delivery worker signs with the decoded bytes (src/webhooks/delivery/).
 */
export function newSecret(): string {
  return SECRET_PREFIX + crypto.randomBytes(SECRET_BYTES).toString('base64');
}

/**
 * An endpoint URL as events tell it (`endpoint.disabled`, sent to the account's other endpoints
 * and chat rooms): a query may hold the receiver's token (`?token=...`), so it shows as
 * `?REDACTED`, and the fragment is dropped. The endpoint itself (GET /webhooks/{id}) still
 * shows the whole URL to the account.
 */
export function redactedEndpointUrl(url: string): string {
  const end = url.search(/[?#]/);
  if (end < 0) return url;
  const hasQuery = url[end] === '?' && end + 1 < url.length && url[end + 1] !== '#';
  return `${url.slice(0, end)}${hasQuery ? '?REDACTED' : ''}`;
}
