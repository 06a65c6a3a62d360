import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, HTTPMethods } from 'fastify';
import { createRequire } from 'node:module';
import { describePlans } from '../auth/service.js';
import { finishDocument } from './components.js';
import { ALIAS_TAG, documentRoute } from './operation.js';
import { DOCS_PREFIX, OPENAPI_PATH } from './paths.js';
import { getOpenApiRoute } from './routes/get-open-api.js';

const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };

export { DOCS_PREFIX, OPENAPI_PATH } from './paths.js';

const DESCRIPTION = `Price monitoring over HTTP and JSON: products, the competitors whose prices are tracked, the
listings (pages) checked on a schedule, price history, changes and trends, and exchange rates; alerts
and webhooks as they arrive.

**Authentication.** Every \`/api/v1\` and \`/v1\` operation needs \`Authorization: Bearer <API key>\`
(the operator makes the first with \`pricehound keys create\`; full keys make more with
\`POST /api/v1/keys\`). A missing, malformed, unknown or revoked key is a
401 with \`WWW-Authenticate: Bearer\`. Operations marked without security (health, readiness,
metrics, this document) need no key.

**Scopes.** A key is \`full\` or \`read\`. A read key may call GET and HEAD operations,
\`POST /api/v1/alerts/preview\`, \`POST /api/v1/alerts/matches\` and \`POST /api/v1/extract\` (they write nothing); every other
operation, and the API keys (\`/api/v1/keys\`) even to read, needs a full key and documents the
403 \`insufficient_scope\` a read key gets there, answered before the body is read.

**Rate limits.** Per key and UTC hour: ${describePlans()} requests. Every
authenticated response carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and
\`X-RateLimit-Reset\`; over the limit the answer is 429 with \`Retry-After\` and the
\`RateLimitExceeded\` body. Failed authentications are limited per client address: a 401 carries
the same three headers describing that address's failure budget (failures per window, failures
left, end of the window), and once it is used up the address gets 429 until the window ends.

**CORS.** Every response carries \`Access-Control-Allow-Origin: *\` and lets scripts read the
headers this document lists; a preflight \`OPTIONS\` is answered 204 on every path, without a key.
Keys go in a header and the API uses no cookies, so any web origin may call it with a key it holds.

**Errors** are JSON in the \`Error\` shape with a stable \`code\` and the \`request_id\` that is
also in the \`X-Request-Id\` header; only a 429 has a body of its own, \`RateLimitExceeded\`, as
the specification fixes it. An unknown path is a 404; a known path with a method it does
not list is a 405 with an \`Allow\` header (\`components.responses.MethodNotAllowed\`). Both are
answered before authentication.

**Caching and retries.** GET responses carry a weak \`ETag\` (but the CSV exports, which stream);
send it in \`If-None-Match\` to get a 304. POSTs that create or act accept an \`Idempotency-Key\` so a retry never acts twice (the dry run
\`POST /api/v1/extract\` saves nothing and needs none).

**Paths.** Every \`/api/v1\` path also answers under \`/v1\` (tag "${ALIAS_TAG}"); a trailing
slash is ignored; every GET also answers HEAD. Request bodies are JSON up to 1 MiB (batch
endpoints 10 MiB; operators may change both).`;

/** Every route Fastify registered, as method and URL (HEAD routes Fastify adds for GETs included). */
export type RouteList = { method: string; url: string }[];
const registered = new WeakMap<FastifyInstance, RouteList>();

/** The routes registered on `app` after registerOpenApi, for checking that the document covers them. */
export function registeredRoutes(app: FastifyInstance): RouteList {
  return registered.get(app) ?? [];
}

/**
 * OpenAPI 3.1 generated from the route schemas that also validate and serialise, served at
 * /api/v1/openapi.json, with interactive docs at /docs. Register before any route.
 * What every route of a kind shares (headers, 304, 500, idempotency) is added by
 * ./operation.ts; ./components.ts turns repeated shapes into components.
 */
export async function registerOpenApi(app: FastifyInstance) {
  const routes: RouteList = [];
  registered.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of ([] as HTTPMethods[]).concat(route.method)) routes.push({ method, url: route.url });
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'pricehound API',
        version: pkg.version,
        description: DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
        contact: { name: 'The operator of this pricehound deployment' },
      },
      // Relative to this document: the deployment that serves it, whatever its host.
      servers: [
        {
          url: '/',
          description: 'This deployment (production, staging, test or local: whichever serves this document)',
          'x-internal': false,
        } as { url: string; description: string },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API key (`ph_live_...`) from `pricehound keys create`, sent as `Authorization: Bearer <key>`',
          },
        },
      },
      security: [{ bearerAuth: [] }],
      tags: [
        { name: 'Products', description: 'Monitored products (spec part 4)' },
        {
          name: 'Competitors',
          description: 'Competitors whose prices are tracked, and how their prices compare with ours',
        },
        {
          name: 'Listings',
          description:
            "Pages where a product's price is checked on a schedule (a competitor's or our own shop's), with their state and check log",
        },
        {
          name: 'Prices',
          description:
            'Price observations, history, changes and trends of products, and the exchange rates that convert them (docs/PRICES.md)',
        },
        {
          name: 'Alerts',
          description: 'Alert rules, the alert events they fire and their acknowledgement (docs/ALERTS.md)',
        },
        {
          name: 'Events',
          description:
            'What happened in the account: the outbox webhooks deliver from, kept at least 30 days (docs/EVENTS.md)',
        },
        {
          name: 'Webhooks',
          description:
            "Endpoints that receive the account's events, signed (Standard Webhooks), with their delivery log (docs/WEBHOOKS.md)",
        },
        {
          name: 'Email',
          description:
            "Addresses that receive the account's events by email, confirmed by a mailed code: a mail per minute or daily and weekly digests, each with an unsubscribe link that needs no key (docs/EMAIL.md)",
        },
        { name: 'Usage', description: 'Rate-limit usage of the calling key' },
        {
          name: 'Keys',
          description: "The account's API keys: list, create (the secret shown once), rename, revoke; full keys only",
        },
        { name: 'Operations', description: 'Health, readiness, metrics and this document; no API key needed' },
        { name: ALIAS_TAG, description: 'The same operations under `/v1` instead of `/api/v1`' },
      ],
    },
    transform: documentRoute,
    transformObject: (doc) =>
      'openapiObject' in doc ? finishDocument(doc.openapiObject as Record<string, unknown>) : doc.swaggerObject,
  });

  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    // Load the canonical document rather than swagger-ui's own copy at /docs/json.
    uiConfig: { urls: [{ url: OPENAPI_PATH, name: 'pricehound API v1' }], deepLinking: true, validatorUrl: null },
    staticCSP: true,
    // Everything is served from here: no third-party hosts (the validator badge is off), and no
    // upgrade-insecure-requests, which would break the page on a plain-http deployment.
    transformStaticCSP: (header) =>
      header
        .split(';')
        .map((d) => d.trim().replace(/ (https:|validator\.swagger\.io)(?= |$)/g, ''))
        .filter((d) => d !== '' && d !== 'upgrade-insecure-requests')
        .join('; '),
  });

  getOpenApiRoute(app);
}
