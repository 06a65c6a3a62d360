import type { FastifyInstance, FastifyRequest, preValidationHookHandler } from 'fastify';
import { type ErrorDetail, ERRORS } from './errors.js';

interface ObjectSchema {
  properties?: Record<string, unknown>;
  additionalProperties?: unknown;
  patternProperties?: unknown;
}

/**
 * The one rule for input a route does not define (docs/API-DECISIONS.md, "Unknown input"): a
 * query parameter its schema does not name, or a body field it does not take, is 422
 * `validation_failed` ("is not a known field"), on every route, as lists always did; so a typo
 * (`?limt=5`, `{"urll": ...}`) never passes silently. A route without a body schema takes no
 * body: an empty one or `{}` is fine, anything else is refused. Unknown fields inside a body
 * with a schema are the schema's (`additionalProperties: false`) and answer the same way.
 *
 * Applied here, to every route with a schema as it is added, so routes added later (alerts,
 * webhooks) follow it without a line of their own. A preValidation hook, before the schema, so
 * the answer does not depend on which part of the request the schema checks first.
 */
export function registerUnknownInputRule(app: FastifyInstance) {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as
      { querystring?: ObjectSchema; body?: unknown; hide?: boolean; security?: unknown[] } | undefined;
    if (!schema || schema.hide) return;
    // The public operations (health, readiness, metrics, the document: `security: []`) take no
    // input at all and are called by probes and scrapers that may add their own query (a cache
    // buster); they answer the same whatever is sent, so nothing can be invalid (docs/OPENAPI.md).
    if (Array.isArray(schema.security) && schema.security.length === 0) return;
    const query = schema.querystring;
    // A schema that means to take more (patterns, open objects) keeps its own rule.
    const checkQuery =
      !query ||
      ((query.additionalProperties === undefined || query.additionalProperties === false) && !query.patternProperties);
    const known = new Set(Object.keys(query?.properties ?? {}));
    const takesBody = schema.body !== undefined;
    const hook: preValidationHookHandler = (request, _reply, done) => {
      // The usual request (no query parameter it does not know, no body it does not take) goes
      // on without building a list: this runs on every request (docs/BENCHMARKS.md, issue 26).
      const badQuery = checkQuery && hasUnknownQuery(request, known);
      const badBody = !takesBody && request.body !== undefined;
      if (!badQuery && !badBody) return done();
      const details = [
        ...(badQuery ? unknownQuery(request, known) : []),
        ...(badBody ? unexpectedBody(request.body) : []),
      ];
      if (details.length === 0) return done();
      const queryOnly = details.every((d) => d.field.startsWith('query:'));
      const clean = details.map((d) => ({ ...d, field: d.field.replace(/^query:/, '') }));
      done(queryOnly ? ERRORS.invalidQuery(clean) : ERRORS.validation(clean));
    };
    const existing = route.preValidation;
    route.preValidation =
      existing === undefined ? [hook] : [hook, ...([] as preValidationHookHandler[]).concat(existing as never)];
  });
}

function hasUnknownQuery(request: FastifyRequest, known: Set<string>): boolean {
  const q = request.query as Record<string, unknown> | undefined;
  if (!q || typeof q !== 'object') return false;
  for (const k in q) if (Object.hasOwn(q, k) && !known.has(k)) return true;
  return false;
}

function unknownQuery(request: FastifyRequest, known: Set<string>): ErrorDetail[] {
  const q = request.query as Record<string, unknown> | undefined;
  if (!q || typeof q !== 'object') return [];
  return Object.keys(q)
    .filter((k) => !known.has(k))
    .slice(0, 20)
    .map((k) => ({ field: `query:${k.slice(0, 100)}`, message: 'is not a known field' }));
}

function unexpectedBody(body: unknown): ErrorDetail[] {
  if (body === undefined) return [];
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    return Object.keys(body)
      .slice(0, 20)
      .map((k) => ({ field: k.slice(0, 100), message: 'is not a known field: this operation takes no request body' }));
  }
  return [{ field: '(body)', message: 'must be empty: this operation takes no request body' }];
}
