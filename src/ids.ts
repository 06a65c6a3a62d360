import crypto from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

/**
 * Opaque ids with a type prefix (`prod_...`): 10 characters of millisecond time then 16 random
 * ones, so ids sort roughly by creation and never collide in practice (80 random bits).
 */
export function newId(prefix: string, now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = crypto.randomBytes(16);
  let rand = '';
  for (const b of bytes) rand += ALPHABET[b % 32];
  return `${prefix}_${time}${rand}`;
}

/**
 * The millisecond time written in an id of newId (or ph_new_id in SQL), or undefined when `id` is
 * not one: the time of day partitions look up a row by id in (src/events/sql.ts, getEvent).
 */
export function idTime(id: string): number | undefined {
  const m = /^[a-z]+_([0-9a-hjkmnp-tv-z]{10})[0-9a-hjkmnp-tv-z]{16}$/.exec(id);
  if (!m) return undefined;
  let t = 0;
  for (const ch of m[1]!) t = t * 32 + ALPHABET.indexOf(ch);
  return t;
}

/**
 * Public ids of rows whose primary key is a bigint sequence (observations, price changes,
 * checks): the prefix, then the number encrypted with the deployment's key, so an id says nothing
 * about how many rows other accounts wrote (docs/API-DECISIONS.md, "Public ids of sequences").
 * The block is the prefix (8 bytes, zero padded) and the number (8 bytes, big-endian), encrypted
 * with AES-128 as one block: a keyed permutation, so every number has one id and back; an id
 * whose decrypted prefix is not its own (tampered, another kind's, another deployment's) decodes
 * to nothing. 128 bits are 26 base32 digits, the first of them 0-7.
 */
export type SequenceKind = 'obs' | 'pchg' | 'chk';

const BLOCK = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/;

export class SequenceIds {
  // ECB has no chaining: one cipher object encrypts any number of single blocks with update().
  private readonly cipher: crypto.Cipher;
  private readonly decipher: crypto.Decipher;

  constructor(key: Buffer) {
    if (key.length !== 16) throw new Error('the id key is 16 bytes');
    this.cipher = crypto.createCipheriv('aes-128-ecb', key, null).setAutoPadding(false);
    this.decipher = crypto.createDecipheriv('aes-128-ecb', key, null).setAutoPadding(false);
  }

  encode(kind: SequenceKind, n: number | string | bigint): string {
    const block = Buffer.alloc(16);
    block.write(kind, 0, 'latin1');
    block.writeBigUInt64BE(BigInt(n), 8);
    let v = BigInt(`0x${this.cipher.update(block).toString('hex')}`);
    let text = '';
    for (let i = 0; i < 26; i++) {
      text = ALPHABET[Number(v & 31n)] + text;
      v >>= 5n;
    }
    return `${kind}_${text}`;
  }

  /** The number behind `id` as decimal text, or null when `id` is not one of ours of this kind. */
  decode(kind: SequenceKind, id: unknown): string | null {
    if (typeof id !== 'string' || !id.startsWith(`${kind}_`)) return null;
    const text = id.slice(kind.length + 1);
    if (!BLOCK.test(text)) return null;
    let v = 0n;
    for (const ch of text) v = (v << 5n) | BigInt(ALPHABET.indexOf(ch));
    const block = this.decipher.update(Buffer.from(v.toString(16).padStart(32, '0'), 'hex'));
    const prefix = Buffer.alloc(8);
    prefix.write(kind, 0, 'latin1');
    if (!block.subarray(0, 8).equals(prefix)) return null;
    const n = block.readBigUInt64BE(8);
    return n > 0n && n <= BigInt(Number.MAX_SAFE_INTEGER) ? n.toString() : null;
  }
}

let current: SequenceIds | undefined;

/** Set once per process from the deployment's key (src/db/id-key.ts, at startup). */
export function useIdKey(key: Buffer): void {
  current = new SequenceIds(key);
}

function sequenceIds(): SequenceIds {
  if (!current) throw new Error('the id key is not loaded (createCoreRuntime loads it)');
  return current;
}

/** `obs_…`, `pchg_…`, `chk_…` of an internal bigint id. */
export const publicId = (kind: SequenceKind, n: number | string | bigint) => sequenceIds().encode(kind, n);

/** The internal id (decimal text) behind a public one, or null: not found, never an error. */
export const internalId = (kind: SequenceKind, id: unknown) => sequenceIds().decode(kind, id);
