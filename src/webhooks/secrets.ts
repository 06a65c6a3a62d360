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
