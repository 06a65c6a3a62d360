import { type BucketRow, bucketBounds } from './sql.js';

/**
 * The bucketed history's answer written as UTF-8 bytes straight from historyQuery's rows: the
 * same bytes the response schema's serializer gives for toSeries(rows) as objects
 * (test/prices/history-json.test.ts), at a fraction of the CPU. A year of day buckets of 11
 * series is 4 026 buckets and ~600 KB. Serialising objects was half of the server's CPU per
 * request; writing the answer as one JavaScript string still spent most of its time flattening
 * that string of ~50 000 pieces and encoding it (docs/BENCHMARKS.md, "Issue 26: the history's answer as bytes").
 * Here each byte is copied once, from the rows' texts or from keys encoded once.
 */

const ascii = (s: string) => Buffer.from(s, 'latin1');
const OPEN = ascii('"open":');
const CLOSE = ascii(',"close":');
const MIN = ascii(',"min":');
const MAX = ascii(',"max":');
const AVERAGE = ascii(',"average":');
const COUNT = ascii(',"count":');
const EMPTY = ascii('"open":null,"close":null,"min":null,"max":null,"average":null,"count":0}');
const COMMA = 44;
const CLOSE_BRACE = 125;

/** A growing byte buffer written front to back. */
class Bytes {
  buf: Buffer;
  pos = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  text(s: string): void {
    this.room(s.length * 3);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }
  /** Bytes `a` to `b` of `src` (short runs: a loop beats copy()'s call). */
  copy(src: Uint8Array, a: number, b: number): void {
    const buf = this.buf;
    let pos = this.pos;
    for (let j = a; j < b; j++) buf[pos++] = src[j]!;
    this.pos = pos;
  }
  all(src: Uint8Array): void {
    this.copy(src, 0, src.length);
  }
  /**
   * A number of the rows' texts (bytes `a` to `b`) as JSON.stringify writes it. PostgreSQL
   * writes the shortest decimal with the trailing zeros trimmed; that is JavaScript's text of
   * the same number whenever it has at most 15 significant digits (every decimal of 15 digits is
   * a distinct double) and no exponent (our numbers are 0 or at least 0.0001, and below 10^15).
   * A longer one (a price of 12 digits and 4 decimals) goes through Number. `null` is itself.
   */
  number(src: Buffer, a: number, b: number): void {
    if (b - a <= 15) this.copy(src, a, b);
    else this.text(String(Number(src.toString('latin1', a, b))));
  }
  /** A key and its number (see number). */
  value(key: Uint8Array, src: Buffer, a: number, b: number): void {
    this.all(key);
    this.number(src, a, b);
  }
}

/** The end of the field starting at `a` of `src` (its comma, or the end). */
function fieldEnd(src: Uint8Array, a: number): number {
  while (a < src.length && src[a] !== COMMA) a++;
  return a;
}

/** The whole number written at `a` to `b` of `src` (a bucket's number; a day before 1970 is negative). */
function integerAt(src: Uint8Array, a: number, b: number): number {
  const negative = src[a] === 45; /* - */
  let n = 0;
  for (let j = negative ? a + 1 : a; j < b; j++) n = n * 10 + src[j]! - 48;
  return negative ? -n : n;
}

/** The number of the bucket whose fields start at `i` of `src`; NaN (equal to none) past the end. */
const bucketAt = (src: Uint8Array, i: number) => (i < src.length ? integerAt(src, i, fieldEnd(src, i)) : NaN);

/**
 * `before` + the JSON of the answer's `series` from historyQuery's rows + `after`, as UTF-8
 * bytes: each series with every bucket of the range, the empty ones as nulls.
 */
export function historyJson(before: string, rows: BucketRow[], after: string): Buffer {
  const bounds = bucketBounds(rows);
  const series = rows.slice(1).map((r) => ({ row: r, src: ascii(r.buckets!) }));
  // Every series has the same buckets: their openings encoded once, end to end.
  const openingTexts = bounds ? bounds.starts.map((s, n) => `{"start":"${s}","end":"${bounds.ends[n]}",`) : [];
  const openings = ascii(openingTexts.join(''));
  const at = new Int32Array(openingTexts.length + 1);
  for (let n = 0; n < openingTexts.length; n++) at[n + 1] = at[n]! + openingTexts[n]!.length;
  let size = before.length * 3 + after.length * 3 + 2;
  for (const s of series) size += 200 + openings.length + EMPTY.length * openingTexts.length + 3 * s.src.length;
  const out = new Bytes(size);
  out.text(before);
  out.text('[');
  const base = bounds?.base ?? 0;
  for (const [k, { row, src }] of series.entries()) {
    out.text(
      `${k > 0 ? ',' : ''}{"competitor_id":${JSON.stringify(row.competitor_id)},"currency":${JSON.stringify(row.currency)},"buckets":[`,
    );
    let i = 0; // where the next bucket with observations starts in src
    let next = bucketAt(src, 0);
    for (let n = 1; n <= openingTexts.length; n++) {
      const oa = at[n - 1]!;
      const ob = at[n]!;
      if (next !== n + base) {
        out.room(1 + ob - oa + EMPTY.length);
        if (n > 1) out.buf[out.pos++] = COMMA;
        out.copy(openings, oa, ob);
        out.all(EMPTY);
        continue;
      }
      // The bucket's six values after its number: open, close, min, max, average, count;
      // close to average are empty when all four equal open.
      const a1 = fieldEnd(src, i) + 1;
      const b1 = fieldEnd(src, a1);
      const b2 = fieldEnd(src, b1 + 1);
      const b3 = fieldEnd(src, b2 + 1);
      const b4 = fieldEnd(src, b3 + 1);
      const b5 = fieldEnd(src, b4 + 1);
      const b6 = fieldEnd(src, b5 + 1);
      out.room(1 + ob - oa + 64 + 6 * (b6 - i) + 6 * 32);
      if (n > 1) out.buf[out.pos++] = COMMA;
      out.copy(openings, oa, ob);
      const same = b2 === b1 + 1;
      out.value(OPEN, src, a1, b1);
      out.value(CLOSE, src, same ? a1 : b1 + 1, same ? b1 : b2);
      out.value(MIN, src, same ? a1 : b2 + 1, same ? b1 : b3);
      out.value(MAX, src, same ? a1 : b3 + 1, same ? b1 : b4);
      out.value(AVERAGE, src, same ? a1 : b4 + 1, same ? b1 : b5);
      out.value(COUNT, src, b5 + 1, b6);
      out.buf[out.pos++] = CLOSE_BRACE;
      i = b6 + 1;
      next = bucketAt(src, i);
    }
    out.text(']}');
  }
  out.text(']');
  out.text(after);
  return out.buf.subarray(0, out.pos);
}
