import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { ERRORS } from './errors.js';
import { inspectJsonText, MAX_JSON_DEPTH } from './json-text.js';

/**
 * JSON bodies: application/json and any `+json` type. An empty body is "no body" (clients that
 * send Content-Type on every request, as the spec's examples do, may DELETE without one).
 * `__proto__` and `constructor.prototype` keys are refused (prototype poisoning).
 */
// Fastify tests this against its normalised header, parameters included: `application/json;
// charset="utf-8"`. Anchoring at the end without allowing them made that a 415.
const JSON_TYPE = /^application\/([\w.+-]+\+)?json(;.*)?$/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

// The platform's UTF-8 decoder, fatal: invalid bytes are refused, never replaced by U+FFFD (two
// SKUs differing only in such bytes would collide). ignoreBOM keeps a BOM in the text, where
// JSON.parse refuses it, as before.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body's bytes -> its value, or the error that answers it. */
export function parseJsonBody(bytes: Uint8Array): { value: unknown } | { error: Error } {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { error: ERRORS.invalidJson('The request body is not valid UTF-8') };
  }
  if (text.trim() === '') return { value: undefined };
  const problem = inspectJsonText(text);
  if (problem?.kind === 'too_deep') {
    return {
      error: ERRORS.invalidJson(`The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`),
    };
  }
  let value: unknown;
  try {
    value = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return { error: ERRORS.invalidJson() };
  }
  if (problem?.kind === 'lone_surrogate') {
    return {
      error: ERRORS.invalidJson(
        `The request body has a \\u escape that is a lone UTF-16 surrogate (not Unicode text) in ${problem.path}`,
      ),
    };
  }
  if (problem?.kind === 'inexact_number') {
    return {
      error: ERRORS.validation([
        {
          field: problem.path,
          message:
            'has more digits than a number can hold exactly (15 significant digits; amounts at most 4 decimal places)',
        },
      ]),
    };
  }
  return { value };
}

export function registerJsonParser(app: FastifyInstance) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_TYPE, { parseAs: 'buffer' }, (req, body, done) => {
    // JSON is UTF-8 (RFC 8259); the body is decoded as such, so another charset is refused.
    const type = req.headers['content-type'];
    const charset = CHARSET.exec(type ?? '')?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) return done(ERRORS.unsupportedMediaType(type), undefined);
    const result = parseJsonBody(body as Buffer);
    if ('error' in result) done(result.error, undefined);
    else done(null, result.value);
  });
}
