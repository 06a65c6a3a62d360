/**
 * Headers that cross-cutting hooks add to or read from every route of a kind, documented here
 * rather than in each route: src/http/etag.ts (ETag, If-None-Match), src/http/idempotency.ts
 * (Idempotency-Key, Idempotent-Replayed) and src/http/not-found.ts (Allow). The route-specific
 * ones live beside the shared error schemas in src/http/schemas.ts.
 */

export const etagHeader = {
  ETag: {
    type: 'string',
    maxLength: 100,
    pattern: '^W/"[A-Za-z0-9_-]+"$',
    description: 'Weak entity tag of the body; send it back in `If-None-Match` to get a 304 while nothing changed',
  },
};

export const idempotentReplayedHeader = {
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description: 'Present when this is the stored response of an earlier request with the same `Idempotency-Key`',
  },
};

export const allowHeader = {
  Allow: {
    type: 'string',
    maxLength: 100,
    pattern: '^[A-Z]+(, [A-Z]+)*$',
    description: 'The methods this path supports, e.g. `DELETE, GET, HEAD, PATCH, PUT`',
  },
};

/** Request headers, as `schema.headers` properties (@fastify/swagger makes them parameters). */
export const ifNoneMatchParam = {
  'If-None-Match': {
    type: 'string',
    maxLength: 2000,
    pattern: '^(\\*|(W/)?"[^"]*"(\\s*,\\s*(W/)?"[^"]*")*)$',
    description:
      'One or more entity tags from earlier `ETag` headers (or `*`); when one matches, the answer is 304 with no body',
  },
};

export const idempotencyKeyParam = {
  'Idempotency-Key': {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    pattern: '^[\\x21-\\x7E]{1,255}$',
    description:
      'Makes a retry safe: a request with the same key, method, path and body within 24 hours gets the first ' +
      'response again (with `Idempotent-Replayed: true`) instead of acting twice. The same key with another ' +
      'body is a 409. Keys are scoped to the account; 1 to 255 visible ASCII characters, e.g. a UUID.',
  },
};
