import crypto from 'node:crypto';

/**
 * Standard Webhooks v1 signatures (https://www.standardwebhooks.com): the base64 HMAC-SHA256 of
 * `${id}.${timestamp}.${body}`, keyed by the bytes the secret's base64 (after `whsec_`) encodes.
 */

const PREFIX = 'whsec_';

export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** One `v1,<base64>` signature. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const mac = crypto.createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export interface SigningSecrets {
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

/**
 * The webhook-signature header: the current secret's signature, then, during a rotation's
 * overlap, the previous secret's, space-separated, so a receiver that still has the old secret
 * verifies as well as one that has the new.
 */
export function signatureHeader(
  s: SigningSecrets,
  id: string,
  timestamp: number,
  body: string,
  now = Date.now(),
): string {
  const current = sign(s.secret, id, timestamp, body);
  if (s.previous_secret && s.previous_secret_expires_at && s.previous_secret_expires_at.getTime() > now) {
    return `${current} ${sign(s.previous_secret, id, timestamp, body)}`;
  }
  return current;
}
