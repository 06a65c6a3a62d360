import { Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ERRORS } from './errors.js';

function decoderFor(encoding: string): Transform | null | undefined {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    case 'identity':
      return null;
    default:
      return undefined;
  }
}

/**
 * Counts decoded bytes and fails with 413 past the route's body limit, so the limit applies to
 * what the body decodes to (a zip bomb of 10 KB that inflates to 10 GB stops at the limit).
 * `receivedEncodedLength` is what Fastify compares with Content-Length.
 */
class Limit extends Transform {
  receivedEncodedLength = 0;
  private decoded = 0;
  constructor(private readonly limit: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
    this.decoded += chunk.length;
    if (this.decoded > this.limit) cb(ERRORS.payloadTooLarge(this.limit));
    else cb(null, chunk);
  }
}

/**
 * Content-Encoding of request bodies: gzip, deflate and br are decoded before the JSON parser
 * sees the body; another encoding (or several stacked) is 415, since a body we cannot decode is
 * one we cannot read. A preParsing hook on the root, so every route has it.
 */
export function registerContentEncoding(app: FastifyInstance) {
  app.addHook('preParsing', (request: FastifyRequest, _reply, payload, done) => {
    const header = request.headers['content-encoding'];
    const hasBody =
      request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
    if (header === undefined || !hasBody) return done(null, payload);
    const encoding = header.trim().toLowerCase();
    const decoder = decoderFor(encoding);
    if (decoder === undefined) {
      return done(ERRORS.unsupportedEncoding(header), undefined);
    }
    if (decoder === null) return done(null, payload);
    const limit = new Limit(request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit ?? 1_048_576);
    payload.on('data', (chunk: Buffer) => (limit.receivedEncodedLength += chunk.length));
    // Not stream.pipeline: it would destroy the request, and with it the socket, before the
    // 413 or 400 could be answered. On an error the rest of the upload is read and dropped.
    const stop = (err: Error) => {
      payload.unpipe(decoder);
      payload.resume();
      decoder.destroy();
      limit.destroy(err);
    };
    decoder.on('error', () => stop(ERRORS.invalidRequest(`The request body is not valid ${encoding} data`)));
    limit.on('error', () => {
      payload.unpipe(decoder);
      payload.resume();
      decoder.destroy();
    });
    payload.on('error', (err) => limit.destroy(err));
    payload.pipe(decoder).pipe(limit);
    done(null, limit);
  });
}
