import zlib from 'node:zlib';
import fc from 'fast-check';
import type { Doc, Obj, Operation } from '../../openapi/support.js';
import { deref } from '../../openapi/support.js';
import { HOSTILE_STRINGS, oneIn, type Values } from './values.js';

/** One generated request for an operation of the document. */
export interface FuzzRequest {
  method: string;
  /** The operation's path in the document (`/api/v1/products/{id}`). */
  path: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** Sent with the fuzzing account's key (not without one or with a wrong one). */
  withKey: boolean;
}

/** Bodies that are not a JSON value of the schema at all. */
const RAW_BODIES = [
  '',
  '{',
  '{"name":',
  '[',
  'null',
  '"text"',
  '12',
  '{"a":1,"a":2}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"name":"\\ud800"}',
  '{"name":"\\u0000"}',
  '\ufeff{}',
  '{"x":1}garbage',
  '{"base_price":19.99000000000000000000000001}',
  '{"base_price":1e400}',
  '{"base_price":-0.0}',
  '['.repeat(20_000),
  `${'['.repeat(5_000)}${']'.repeat(5_000)}`,
  `${'{"a":'.repeat(3_000)}1${'}'.repeat(3_000)}`,
  // Past the 1 MiB body limit (not the batch routes' 10 MiB one).
  `{"name":"${'x'.repeat(1_100_000)}"}`,
];

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=latin1',
  'application/merge-patch+json',
  'multipart/form-data; boundary=x',
];
const ENCODINGS = ['gzip', 'br', 'deflate', 'identity', 'compress', 'gzip, gzip'];

/** encodeURIComponent that does not throw on lone surrogates (they become U+FFFD bytes). */
function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return [...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
  }
}

const text = (v: unknown) =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : (JSON.stringify(v) ?? '');
/** What a header can carry at all (node refuses control characters and non-Latin-1). */
const headerSafe = (v: string) => v.replace(/[^\x20-\x7e]/g, '?').slice(0, 4000);

/** Rewrites the first number of a JSON text into one JSON can hold but our money type cannot. */
const NUMBER_SWAPS = [
  '19.99000000000000000000000001',
  '1e400',
  '-1e400',
  '1E2',
  '0.00001',
  '123456789012345678901234567890',
];

export class Requests {
  constructor(
    private readonly doc: Doc,
    private readonly values: Values,
    private readonly ids: { cursors: string[] },
  ) {}

  forOperation(path: string, method: string, op: Operation): fc.Arbitrary<FuzzRequest> {
    const params = (op.parameters ?? []).map((p) => deref<Obj>(this.doc, p));
    const pathParams = params.filter((p) => p.in === 'path');
    const queryParams = params.filter((p) => p.in === 'query');
    const headerParams = params.filter((p) => p.in === 'header');
    const body = op.requestBody ? deref<Obj>(this.doc, op.requestBody) : undefined;
    const bodySchema = body ? (body.content as Record<string, Obj>)['application/json']?.schema : undefined;

    const pathArb = fc.tuple(
      ...pathParams.map((p) => fc.tuple(fc.constant(String(p.name)), this.values.any(p.schema).map(text), fc.nat(99))),
    );
    const queryArb = fc.tuple(
      ...queryParams.map((p) => oneIn(3, fc.tuple(fc.constant(String(p.name)), this.queryValue(p)))),
      oneIn(
        12,
        fc.tuple(
          fc.constantFrom('unknown', 'limit', 'LIMIT', '__proto__', 'sort[]', ''),
          fc.constantFrom(...HOSTILE_STRINGS.slice(0, 30)),
        ),
      ),
    );
    const headerArb = fc.tuple(
      ...headerParams.map((p) => oneIn(3, fc.tuple(fc.constant(String(p.name)), this.headerValue(p)))),
    );
    const bodyArb = this.body(bodySchema);
    const acceptArb = oneIn(
      8,
      fc.constantFrom('text/html', '*/*', 'application/xml', 'text/csv', 'application/json;q=0', ''),
    );
    const authArb = fc.constantFrom<'own' | 'none' | 'garbage'>(...Array<'own'>(30).fill('own'), 'none', 'garbage');

    return fc
      .record({
        path: pathArb,
        query: queryArb,
        headers: headerArb,
        body: bodyArb,
        auth: authArb,
        accept: acceptArb,
        repeat: fc.nat(9),
      })
      .map((g) => {
        let url = path;
        for (const [name, value, roll] of g.path) {
          const raw = roll < 15 && /^[\x21-\x7e]*$/.test(value) && !/[?#]/.test(value);
          // An empty segment would make the URL another operation's (`/listings/` is the list).
          url = url.replace(`{${name}}`, value === '' ? '%20' : raw ? value : encode(value));
        }
        const query = g.query
          .filter((q): q is [string, string] => q !== null)
          .map(([k, v]) => (v.startsWith('%raw:') ? `${encode(k)}=${v.slice(5)}` : `${encode(k)}=${encode(v)}`));
        // A parameter given twice arrives as an array.
        if (query.length && g.repeat === 0) query.push(query[0]!);
        if (query.length) url += `?${query.join('&')}`;
        const headers: Record<string, string> = {};
        for (const h of g.headers) if (h) headers[h[0].toLowerCase()] = h[1];
        if (g.accept !== null) headers.accept = g.accept;
        if (g.auth === 'garbage') headers.authorization = 'Bearer ph_live_' + 'x'.repeat(40);
        let payload: string | Buffer | undefined;
        if (g.body) {
          payload = g.body.text;
          if (g.body.contentType) headers['content-type'] = g.body.contentType;
          if (g.body.encoding) {
            headers['content-encoding'] = g.body.encoding;
            if (g.body.encoding === 'gzip' && g.body.compress) payload = zlib.gzipSync(payload);
          }
        }
        return {
          method: method.toUpperCase(),
          path,
          url,
          headers,
          withKey: g.auth === 'own',
          ...(payload !== undefined ? { payload } : {}),
        };
      });
  }

  private queryValue(p: Obj): fc.Arbitrary<string> {
    const fromSchema = this.values.any(p.schema).map(text);
    const raw = fc.constantFrom('%raw:%FF', '%raw:%ED%A0%80', '%raw:%', '%raw:%zz', '%raw:a%00b');
    if (p.name === 'cursor') {
      const harvested = fc
        .constant(null)
        .chain(() =>
          this.ids.cursors.length ? fc.constantFrom(...this.ids.cursors) : fc.constant('bm90IGEgY3Vyc29y'),
        );
      const forged = fc.constantFrom(
        Buffer.from('[1,"x"]').toString('base64url'),
        Buffer.from('{"k":[]}').toString('base64url'),
        Buffer.from('[' + '1,'.repeat(5000) + '1]').toString('base64url'),
      );
      return fc.oneof(harvested, forged, fromSchema, raw);
    }
    return fc.oneof({ weight: 8, arbitrary: fromSchema }, { weight: 1, arbitrary: raw });
  }

  private headerValue(p: Obj): fc.Arbitrary<string> {
    const special =
      p.name === 'If-None-Match' ? fc.constantFrom('*', '"abc"', 'W/"abc"', '"a", "b"', '"', 'W/') : fc.uuid();
    return fc.oneof(
      special,
      this.values.any(p.schema).map((v) => headerSafe(text(v))),
    );
  }

  private body(schema: unknown) {
    type Body = { text: string; contentType?: string; encoding?: string; compress: boolean } | null;
    const json = schema
      ? fc.oneof(this.values.valid(schema, 0, true), this.values.any(schema)).map((v) => JSON.stringify(v) ?? 'null')
      : fc.constant('{}');
    const swapped = json.chain((t) =>
      fc.constantFrom(...NUMBER_SWAPS).map((n) => t.replace(/-?\d+(\.\d+)?([eE][+-]?\d+)?/, n)),
    );
    const textArb = fc.oneof(
      { weight: 12, arbitrary: json },
      { weight: 2, arbitrary: swapped },
      { weight: 2, arbitrary: fc.constantFrom(...RAW_BODIES) },
    );
    const present = fc.record({
      text: textArb,
      contentType: fc.oneof(
        { weight: 14, arbitrary: fc.constant('application/json') },
        { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      ),
      encoding: oneIn(12, fc.constantFrom(...ENCODINGS)).map((e) => e ?? undefined),
      compress: fc.boolean(),
    });
    // An operation without a body still gets one sometimes: it must be refused or ignored by one rule.
    return fc.oneof(
      { weight: schema ? 12 : 1, arbitrary: present as fc.Arbitrary<Body> },
      { weight: schema ? 1 : 6, arbitrary: fc.constant<Body>(null) },
    );
  }
}
