import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { ERRORS } from './errors.js';

/**
 * JSON bodies: application/json and any `+json` type. An empty body is "no body" (clients that
 * send Content-Type on every request, as the spec's examples do, may DELETE without one).
 * `__proto__` and `constructor.prototype` keys are refused (prototype poisoning).
 */
// Fastify tests this against its normalised header, parameters included: `application/json;
// charset="utf-8"`. Anchoring at the end without allowing them made that a 415.
const JSON_TYPE = /^application\/([\w.+-]+\+)?json(;.*)?$/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

export function registerJsonParser(app: FastifyInstance) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_TYPE, { parseAs: 'string' }, (req, body, done) => {
    // JSON is UTF-8 (RFC 8259); the body is decoded as such, so another charset is refused.
    const type = req.headers['content-type'];
    const charset = CHARSET.exec(type ?? '')?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) return done(ERRORS.unsupportedMediaType(type), undefined);
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(ERRORS.invalidJson(), undefined);
    }
  });
}
