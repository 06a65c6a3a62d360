import crypto from 'node:crypto';
import { deriveKey } from '../db/id-key.js';

/**
 * The secrets of email (docs/EMAIL.md, "Codes and links"): confirmation codes, kept only as an
 * HMAC, and unsubscribe tokens, signed so that a link works without an API key and cannot be
 * altered to reach another subscription. Both keys are derived from the deployment's key.
 */
export class EmailSecrets {
  private readonly codeKey: Buffer;
  private readonly tokenKey: Buffer;

  constructor(deploymentKey: Buffer) {
    this.codeKey = deriveKey(deploymentKey, 'email confirmation codes');
    this.tokenKey = deriveKey(deploymentKey, 'email unsubscribe tokens');
  }

  /** A 6-digit code, uniformly drawn. */
  static newCode(): string {
    return String(crypto.randomInt(0, 1_000_000)).padStart(6, '0');
  }

  static newNonce(): string {
    return crypto.randomBytes(12).toString('base64url');
  }

  /** What is stored of a code: bound to its subscription, so one hash says nothing of another. */
  codeHash(subscriptionId: string, code: string): string {
    return crypto.createHmac('sha256', this.codeKey).update(`${subscriptionId}\n${code}`).digest('hex');
  }

  /** Constant time: how much of a guess matches is not told by how long the answer takes. */
  codeMatches(subscriptionId: string, code: string, storedHash: string): boolean {
    const a = Buffer.from(this.codeHash(subscriptionId, code), 'hex');
    const b = Buffer.from(storedHash, 'hex');
    return a.length === b.length && crypto.timingSafeEqual(a, b);
  }

  /** `<subscription id>.<nonce>.<signature>`, all base64url-safe. */
  unsubscribeToken(subscriptionId: string, nonce: string): string {
    return `${subscriptionId}.${nonce}.${this.sign(subscriptionId, nonce)}`;
  }

  /** The subscription id and nonce of an untouched token; undefined for anything else. */
  readToken(token: string): { subscriptionId: string; nonce: string } | undefined {
    const m = /^(esub_[0-9A-Za-z]{1,60})\.([A-Za-z0-9_-]{1,40})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return undefined;
    const [, subscriptionId, nonce, signature] = m as unknown as [string, string, string, string];
    const want = Buffer.from(this.sign(subscriptionId, nonce));
    const got = Buffer.from(signature);
    if (want.length !== got.length || !crypto.timingSafeEqual(want, got)) return undefined;
    return { subscriptionId, nonce };
  }

  private sign(subscriptionId: string, nonce: string): string {
    return crypto
      .createHmac('sha256', this.tokenKey)
      .update(`unsubscribe\n${subscriptionId}\n${nonce}`)
      .digest('base64url');
  }
}

/** Whether two nonces are the same, in constant time. */
export function sameNonce(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}
