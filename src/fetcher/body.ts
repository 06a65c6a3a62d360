/**
 * Reading a response body within the size cap, undoing its Content-Encoding (the cap applies
 * to the decompressed size, so a small "zip bomb" fails like a big page), and decoding it to
 * text with the right charset.
 */
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { FetchError } from './types.js';

export const ACCEPT_ENCODING = 'gzip, deflate, br';

/** "5 MB", "512 KB": sizes as users read them (binary units, as the settings are). */
export function formatBytes(n: number): string {
  const MiB = 1024 * 1024;
  if (n >= MiB) return `${Number.isInteger(n / MiB) ? n / MiB : (n / MiB).toFixed(1)} MB`;
  if (n >= 1024) return `${Number.isInteger(n / 1024) ? n / 1024 : (n / 1024).toFixed(1)} KB`;
  return `${n} bytes`;
}

export function tooLarge(maxBytes: number): FetchError {
  return new FetchError('too_large', `the page is larger than ${formatBytes(maxBytes)} (FETCH_MAX_BYTES)`);
}

export interface CollectResult {
  buffer: Buffer;
  /** True when `truncate` cut the body at maxBytes. */
  truncated: boolean;
}

/**
 * Read `body` into one Buffer, failing with too_large (or cutting, with `truncate`) beyond
 * `maxBytes`. The stream is destroyed when reading stops early, so no more is downloaded.
 */
export async function collect(body: Readable, maxBytes: number, truncate = false): Promise<CollectResult> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (n + chunk.length > maxBytes) {
      if (!truncate) throw tooLarge(maxBytes);
      chunks.push(chunk.subarray(0, maxBytes - n));
      n = maxBytes;
      body.destroy();
      return { buffer: Buffer.concat(chunks, n), truncated: true };
    }
    chunks.push(chunk);
    n += chunk.length;
  }
  return { buffer: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, n), truncated: false };
}

const gunzip = promisify<zlib.InputType, zlib.ZlibOptions, Buffer>(zlib.gunzip);
const inflate = promisify<zlib.InputType, zlib.ZlibOptions, Buffer>(zlib.inflate);
const inflateRaw = promisify<zlib.InputType, zlib.ZlibOptions, Buffer>(zlib.inflateRaw);
const brotli = promisify<zlib.InputType, zlib.BrotliOptions, Buffer>(zlib.brotliDecompress);

/** The codings of a Content-Encoding header, in the order they were applied; identity dropped. */
export function parseContentEncoding(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const joined = Array.isArray(header) ? header.join(',') : header;
  return joined
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '' && s !== 'identity');
}

/** Is the first 2-byte header a zlib (RFC 1950) header? Some servers send raw deflate instead. */
function looksLikeZlib(b: Buffer): boolean {
  return b.length >= 2 && (b[0]! & 0x0f) === 8 && b[0]! >> 4 <= 7 && ((b[0]! << 8) | b[1]!) % 31 === 0;
}

/**
 * Undo `codings` (as listed in Content-Encoding) on `data`, producing at most `maxBytes`.
 * zlib's maxOutputLength stops inflating at the cap, so a bomb costs at most the cap in memory
 * and time; the work runs on libuv's thread pool, off the event loop.
 */
export async function decompress(data: Buffer, codings: string[], maxBytes: number): Promise<Buffer> {
  let out = data;
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i]!;
    // Bigger output chunks than zlib's 16 KB: fewer thread-pool round trips per page.
    const opts = { maxOutputLength: maxBytes, chunkSize: 64 * 1024 };
    try {
      if (coding === 'gzip' || coding === 'x-gzip') out = await gunzip(out, opts);
      else if (coding === 'br') out = await brotli(out, opts);
      else if (coding === 'deflate') out = looksLikeZlib(out) ? await inflate(out, opts) : await inflateRaw(out, opts);
      else
        throw new FetchError(
          'unsupported_content',
          `the site sent the page compressed as "${coding}", which pricehound cannot read`,
        );
    } catch (err) {
      if (err instanceof FetchError) throw err;
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxBytes);
      throw new FetchError(
        'network',
        `the page's ${coding} compressed body is corrupt (${(err as Error).message})`,
        undefined,
        { cause: err },
      );
    }
  }
  return out;
}

/** How a response's Content-Type is treated. */
export type ContentKind = 'html' | 'text' | 'binary' | 'unknown';

const TEXT_TYPES = new Set([
  'application/json',
  'application/ld+json',
  'application/xml',
  'application/javascript',
  'application/x-javascript',
  'application/rss+xml',
  'application/atom+xml',
]);

export function mimeType(contentType: string | null | undefined): string | null {
  if (!contentType) return null;
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase() || null;
}

export function contentKind(contentType: string | null | undefined): ContentKind {
  const mime = mimeType(contentType);
  if (
    mime === null ||
    mime === 'application/octet-stream' ||
    mime === 'binary/octet-stream' ||
    mime === 'application/unknown'
  ) {
    return 'unknown';
  }
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html';
  if (mime.startsWith('text/') || TEXT_TYPES.has(mime) || mime.endsWith('+json') || mime.endsWith('+xml'))
    return 'text';
  return 'binary';
}

/** Does the start of `buf` look binary (NUL bytes outside a UTF-16 text)? */
export function looksBinary(buf: Buffer): boolean {
  if (buf.length >= 2 && ((buf[0] === 0xfe && buf[1] === 0xff) || (buf[0] === 0xff && buf[1] === 0xfe))) return false;
  const end = Math.min(buf.length, 1024);
  for (let i = 0; i < end; i++) if (buf[i] === 0) return true;
  return false;
}

const decoders = new Map<string, TextDecoder>();

/** A TextDecoder for a charset label, or undefined when the label is unknown. */
function decoderFor(label: string): TextDecoder | undefined {
  const key = label.trim().toLowerCase();
  let d = decoders.get(key);
  if (!d) {
    try {
      d = new TextDecoder(key);
    } catch {
      return undefined;
    }
    if (decoders.size < 64) decoders.set(key, d);
  }
  return d;
}

/** The charset parameter of a Content-Type value. */
export function charsetParam(contentType: string | null | undefined): string | undefined {
  if (!contentType) return undefined;
  const m = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  const v = m?.[1] ?? m?.[2];
  return v ? v : undefined;
}

const META_CHARSET = /<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([a-z0-9_:.+-]+)/i;
const XML_ENCODING = /^\s*<\?xml\b[^>]*?\bencoding\s*=\s*["']([a-z0-9_:.+-]+)["']/i;

/**
 * The charset declared in the document itself: <meta charset>, <meta http-equiv=Content-Type
 * content="...; charset=...">, or an XML declaration, within the first 1024 bytes (as the
 * WHATWG prescan looks).
 */
export function sniffCharset(buf: Buffer): string | undefined {
  const head = buf.toString('latin1', 0, Math.min(buf.length, 1024));
  return META_CHARSET.exec(head)?.[1] ?? XML_ENCODING.exec(head)?.[1];
}

export interface DecodedText {
  text: string;
  /** The encoding used (WHATWG name, e.g. "utf-8", "windows-1252"). */
  charset: string;
}

/**
 * Decode a body: a byte order mark wins, then the Content-Type charset, then (for HTML, XML and
 * unlabelled bodies) a charset declared in the document, else UTF-8. Unknown labels fall
 * through to the next source. Undecodable bytes become U+FFFD, never an error.
 */
export function decodeText(buf: Buffer, contentType: string | null | undefined): DecodedText {
  let label: string | undefined;
  if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) label = 'utf-8';
  else if (buf.length >= 2 && buf[0] === 0xfe && buf[1] === 0xff) label = 'utf-16be';
  else if (buf.length >= 2 && buf[0] === 0xff && buf[1] === 0xfe) label = 'utf-16le';
  let decoder = label ? decoderFor(label) : undefined;
  if (!decoder) {
    const fromHeader = charsetParam(contentType);
    decoder = fromHeader ? decoderFor(fromHeader) : undefined;
  }
  if (!decoder && (contentKind(contentType) !== 'text' || mimeType(contentType)!.endsWith('xml'))) {
    const fromDoc = sniffCharset(buf);
    decoder = fromDoc ? decoderFor(fromDoc) : undefined;
    // A document cannot declare itself UTF-16 in ASCII-compatible bytes (WHATWG: use UTF-8).
    if (decoder?.encoding.startsWith('utf-16')) decoder = undefined;
  }
  decoder ??= decoderFor('utf-8')!;
  if (decoder.encoding === 'windows-1252') return { text: decodeWindows1252(buf), charset: 'windows-1252' };
  return { text: decoder.decode(buf), charset: decoder.encoding };
}

// WHATWG index-windows-1252 for 0x80-0x9F (0x81, 0x8D, 0x8F, 0x90, 0x9D map to themselves).
const CP1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/**
 * windows-1252 (also what "iso-8859-1", "latin1" and "us-ascii" mean on the web). Node 20's
 * TextDecoder decodes 0x80-0x9F of this encoding as C1 controls (ISO-8859-1 proper), losing €,
 * curly quotes and dashes, so those 32 bytes are mapped here.
 */
export function decodeWindows1252(buf: Buffer): string {
  const latin1 = buf.toString('latin1');
  return /[\x80-\x9f]/.test(latin1)
    ? latin1.replace(/[\x80-\x9f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!)
    : latin1;
}
