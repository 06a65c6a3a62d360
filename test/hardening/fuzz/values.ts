import fc from 'fast-check';
import type { Doc, Obj } from '../../openapi/support.js';
import { deref } from '../../openapi/support.js';

/**
 * Values for a JSON Schema of the OpenAPI document: valid ones (so requests get past validation
 * and reach the services), boundary ones, and hostile ones. Derived from the schema, never
 * written per route.
 */

/** Ids seen so far, by prefix (`prod_`), of the fuzzing account and of another one. */
export interface IdPools {
  own: Map<string, string[]>;
  other: Map<string, string[]>;
  cursors: string[];
}

const LONG = 'x'.repeat(10_001);
const VERY_LONG = 'é'.repeat(70_000);

/** Strings an attacker tries in any field. */
export const HOSTILE_STRINGS = [
  '',
  ' ',
  '\t\n',
  "' OR 1=1 --",
  "'; DROP TABLE products; --",
  '%',
  '_',
  '\\',
  '"',
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  "=cmd|' /C calc'!A0",
  '\ud800',
  'a\udfffb',
  '\u0000',
  'a\u0000b',
  '\u202egnp.exe',
  '\u200b',
  '😀'.repeat(50),
  '../../../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%2e%2e/%2e%2e/',
  '..\\..\\windows',
  '/dev/zero',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e999',
  '-0',
  '0x10',
  ' 12 ',
  '99999999999999999999999999',
  '19.99000000000000000000000001',
  'null',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  '${jndi:ldap://127.0.0.1:9/a}',
  '{{7*7}}',
  'prod_',
  'prod_0000000000000000000000000000',
  'prod_../../x',
  'comp_%00',
  LONG,
  VERY_LONG,
];

export const HOSTILE_NUMBERS = [
  0,
  -0,
  -1,
  1,
  0.1,
  1e-7,
  1.23456789,
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31),
  2 ** 53,
  2 ** 53 + 2,
  Number.MAX_SAFE_INTEGER,
  1e308,
  -1e308,
  99_999_999_999.9999,
  100_000_000_000,
];

/** Only loopback targets: a generated URL must never make the test send traffic elsewhere. */
export const URLS = [
  'http://127.0.0.1:9/item',
  'https://127.0.0.1:9/p?id=1&x=%00',
  'http://localhost:9/a/b.html#frag',
  'http://[::1]:9/',
  'HTTP://LOCALHOST:9/UPPER',
  'http://user:pw@127.0.0.1:9/creds',
  'http://127.0.0.1:9/../../etc/passwd',
  `http://127.0.0.1:9/${'a'.repeat(2100)}`,
  'http://127.0.0.1:9/<script>',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'ftp://127.0.0.1:9/',
  'http://',
  'http:///nohost',
  '//127.0.0.1:9/relative',
  'data:text/html,<b>x</b>',
];

const CURRENCIES = ['EUR', 'USD', 'eur', 'JPY', 'BHD', 'XXX', 'ZZZ', 'EU', 'EURO', '€'];

const hostile = (): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
    { weight: 2, arbitrary: fc.constantFrom<unknown>(...HOSTILE_NUMBERS, null, true, false, [], {}, [null], { a: 1 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 1, arbitrary: fc.double() },
    { weight: 1, arbitrary: fc.constant(nested(200)) },
  );

/** `[[[...]]]` `depth` levels deep, as a value. */
export function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

/** `arb` one time in `every`, null otherwise (fc.option's `freq` is the other way round). */
export const oneIn = <T>(every: number, arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: every - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });

const idPrefix = (pattern: unknown) => (typeof pattern === 'string' ? /^\^([a-z]+_)\[/.exec(pattern)?.[1] : undefined);

export class Values {
  constructor(
    private readonly doc: Doc,
    private readonly ids: IdPools,
  ) {}

  /** A value for `schema`: mostly valid, sometimes hostile. */
  any(schema: unknown, depth = 0): fc.Arbitrary<unknown> {
    return fc.oneof({ weight: 5, arbitrary: this.valid(schema, depth) }, { weight: 1, arbitrary: hostile() });
  }

  /** Ids of `prefix`: the account's own, another account's, or made up. */
  id(prefix: string, strict = false): fc.Arbitrary<string> {
    const pool = (m: Map<string, string[]>) =>
      fc
        .constant(null)
        .map(() => m.get(prefix) ?? [])
        .chain((a) => (a.length ? fc.constantFrom(...a) : fc.constant(`${prefix}0000000000000000000000000000`)));
    return fc.oneof(
      { weight: 6, arbitrary: pool(this.ids.own) },
      { weight: strict ? 0 : 2, arbitrary: pool(this.ids.other) },
      { weight: 1, arbitrary: fc.stringMatching(new RegExp(`^${prefix}[0-9A-Za-z]{1,40}$`)) },
    );
  }

  /** `strict`: every nested value valid too, no unknown fields (requests that reach the services). */
  valid(schemaIn: unknown, depth = 0, strict = false): fc.Arbitrary<unknown> {
    const s = deref<Obj>(this.doc, schemaIn);
    if (!s || typeof s !== 'object' || depth > 5) return fc.constant(null);
    if (s.const !== undefined) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    for (const k of ['oneOf', 'anyOf'] as const) {
      if (Array.isArray(s[k]))
        return fc.oneof(
          ...(s[k] as unknown[]).map((alt) =>
            this.valid({ ...s, [k]: undefined, ...deref<Obj>(this.doc, alt) }, depth + 1, strict),
          ),
        );
    }
    if (Array.isArray(s.allOf))
      return this.valid(
        Object.assign({}, ...(s.allOf as unknown[]).map((x) => deref(this.doc, x)), { allOf: undefined }),
        depth + 1,
        strict,
      );
    if (Array.isArray(s.type))
      return fc.oneof(...(s.type as string[]).map((type) => this.valid({ ...s, type }, depth, strict)));
    switch (s.type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
      case 'number':
        return this.number(s, strict);
      case 'string':
        return this.string(s, strict);
      case 'array': {
        const max = Math.min(Number(s.maxItems ?? 4), 4);
        const min = Math.min(Number(s.minItems ?? 0), max);
        return fc.array(strict ? this.valid(s.items ?? {}, depth + 1, true) : this.any(s.items ?? {}, depth + 1), {
          minLength: min,
          maxLength: max,
        });
      }
      case 'object':
      default:
        return this.object(s, depth, strict);
    }
  }

  private object(s: Obj, depth: number, strict: boolean): fc.Arbitrary<unknown> {
    const props = (s.properties ?? {}) as Record<string, unknown>;
    const required = new Set((s.required ?? []) as string[]);
    const model = Object.fromEntries(
      Object.entries(props).map(([k, v]) => [k, strict ? this.valid(v, depth + 1, true) : this.any(v, depth + 1)]),
    );
    if (strict) return fc.record(model, { requiredKeys: Object.keys(props).filter((k) => required.has(k)) });
    return fc
      .tuple(
        fc.record(model, { requiredKeys: Object.keys(props).filter((k) => required.has(k)) }),
        oneIn(
          8,
          fc.tuple(
            fc.constantFrom(
              'unknown_field',
              '__proto__',
              'constructor',
              'id',
              'account_id',
              'created_at',
              'é'.repeat(400),
            ),
            hostile(),
          ),
        ),
      )
      .map(([o, extra]) => (extra ? { ...o, [extra[0]]: extra[1] } : o));
  }

  private number(s: Obj, strict: boolean): fc.Arbitrary<number> {
    const min = typeof s.minimum === 'number' ? s.minimum : -1e6;
    const max = typeof s.maximum === 'number' ? s.maximum : 1e6;
    const boundary = strict ? fc.constantFrom(min, max) : fc.constantFrom(min, max, min - 1, max + 1);
    if (s.type === 'integer') {
      const lo = Math.max(min, Number.MIN_SAFE_INTEGER);
      const hi = Math.min(max, Number.MAX_SAFE_INTEGER);
      return fc.oneof(
        {
          weight: 5,
          arbitrary: fc.integer({
            min: Math.ceil(Math.max(lo, -(2 ** 31))),
            max: Math.floor(Math.min(hi, 2 ** 31 - 1)),
          }),
        },
        { weight: 1, arbitrary: boundary },
      );
    }
    // money and percent: at most 4 decimal places.
    const cents = fc
      .integer({ min: Math.ceil(min * 100), max: Math.floor(Math.min(max, 1e9) * 100) })
      .map((c) => c / 100);
    return fc.oneof(
      { weight: 5, arbitrary: cents },
      { weight: 1, arbitrary: boundary },
      ...(strict ? [] : [{ weight: 1, arbitrary: fc.double({ min, max, noNaN: true }) }]),
    );
  }

  private string(s: Obj, strict: boolean): fc.Arbitrary<string> {
    const prefix = idPrefix(s.pattern);
    if (prefix) return this.id(prefix, strict);
    switch (s.format) {
      case 'uri':
      case 'uri-reference':
        return fc.constantFrom(...(strict ? URLS.slice(0, 5) : URLS));
      case 'iso4217':
        return fc.constantFrom(...(strict ? CURRENCIES.slice(0, 5) : CURRENCIES));
      case 'date-time': {
        const date = fc
          .date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString());
        if (strict) return date;
        return fc.oneof(
          date,
          fc.constantFrom(
            '2025-02-30T00:00:00Z',
            '0000-01-01T00:00:00Z',
            '9999-12-31T23:59:59.999Z',
            '2025-01-01',
            '2025-01-01T00:00:00+14:00',
            'yesterday',
          ),
        );
      }
    }
    const maxLength = Math.min(Number(s.maxLength ?? 40), 60);
    const minLength = Math.min(Number(s.minLength ?? 0), maxLength);
    const plain = fc.string({ minLength: Math.max(1, minLength), maxLength, unit: 'grapheme' });
    if (typeof s.pattern === 'string') {
      try {
        const re = new RegExp(s.pattern, 'u');
        const matching = fc
          .stringMatching(re)
          .filter((x) => x.length >= Number(s.minLength ?? 0) && x.length <= Number(s.maxLength ?? Infinity));
        return strict ? matching : fc.oneof(matching, plain);
      } catch {
        return plain;
      }
    }
    return plain;
  }
}
