import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE = /^[A-Za-z0-9._:-]{1,128}$/;

// 96 random bits per id, as before, but drawn from a pool filled 1024 ids at a time: one
// randomBytes(12) call per request cost ~6 us, a slice of the pool ~0.3 us.
const ID_BYTES = 12;
const POOL_IDS = 1024;
let pool = Buffer.alloc(0);
let offset = 0;

function randomId(): string {
  if (offset >= pool.length) {
    pool = crypto.randomBytes(ID_BYTES * POOL_IDS);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}

/** A caller's X-Request-Id is kept when it is short and plain; otherwise we make one. */
export function genReqId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && SAFE.test(given)) return given;
  return `req_${randomId()}`;
}
