import Fastify, { type FastifyInstance, type FastifyServerOptions, type onSendHookHandler } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authHook } from './auth/hook.js';
import { keyRoutes } from './auth/index.js';
import { KEY_IN_TEXT } from './auth/keys.js';
import { alertRoutes } from './alerts/index.js';
import { checkRoutes } from './checks/index.js';
import { competitorRoutes } from './competitors/index.js';
import { dashboardRoutes } from './dashboard/index.js';
import { emailPublicRoutes, emailRoutes } from './email/index.js';
import { eventRoutes } from './events/index.js';
import { exchangeRateRoutes } from './exchange-rates/index.js';
import { listingRoutes } from './listings/index.js';
import { registerHealth } from './ops/health.js';
import { registerMetrics } from './ops/metrics.js';
import { registerOpenApi } from './openapi/plugin.js';
import { positionRoutes } from './positions/index.js';
import { priceRoutes } from './prices/index.js';
import { productRoutes } from './products/index.js';
import { getUsageRoute } from './usage/routes/get-usage.js';
import { webhookRoutes } from './webhooks/index.js';
import { SECRET_IN_TEXT } from './webhooks/secrets.js';
import type { AppContext } from './context.js';
import type { ApiInjector } from './owner-channel/operations.js';
import { registerContentEncoding } from './http/content-encoding.js';
import { registerCors } from './http/cors.js';
import { clientErrorHandler, registerProtocolChecks } from './http/client-error.js';
import { errorHandler, frameworkErrors } from './http/error-handler.js';
import { registerEtag } from './http/etag.js';
import { registerIdempotency } from './http/idempotency.js';
import { registerJsonParser } from './http/json-parser.js';
import { RequestLogController } from './http/log-controller.js';
import { registerNotFound } from './http/not-found.js';
import { registerOptionalBody } from './http/optional-body.js';
import { genReqId } from './http/request-id.js';
import { registerUnknownInputRule } from './http/unknown-input.js';
import { lazySerializerFactory } from './http/lazy-serializer.js';
import { registerRouteMemo } from './http/route-options.js';
import { validatorCompiler } from './http/validation.js';

export interface BuildOptions {
  logger?: FastifyServerOptions['loggerInstance'] | boolean;
}

/** The API routes; mounted under /api/v1 (canonical) and /v1 (the spec's usage example). */
async function apiV1(app: FastifyInstance) {
  app.addHook('onRequest', authHook(app.ctx));
  markWrites(app);
  registerIdempotency(app, app.ctx.db, app.ctx.deploymentKey);
  await app.register(productRoutes);
  await app.register(competitorRoutes);
  await app.register(listingRoutes);
  await app.register(getUsageRoute);
  await app.register(checkRoutes);
  await app.register(priceRoutes);
  await app.register(exchangeRateRoutes);
  await app.register(positionRoutes);
  await app.register(eventRoutes);
  await app.register(alertRoutes);
  await app.register(webhookRoutes);
  await app.register(emailRoutes);
  await app.register(keyRoutes);
}

/**
 * Read-your-writes with a read replica (src/db/read-replica.ts): every answer to a request that
 * may write (any method but GET and HEAD) notes the account's write as it is sent, after its
 * transaction committed, so the account's replica-tolerant reads go to the primary until the
 * replica has replayed it. A route-level hook on the writing routes only: a GET pays nothing.
 */
function markWrites(app: FastifyInstance) {
  const reads = app.ctx.reads;
  const noteWrite: onSendHookHandler = (request, _reply, payload, done) => {
    const accountId = (request.principal as { accountId?: string } | null)?.accountId;
    if (accountId) reads.wrote(accountId);
    done(null, payload);
  };
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((m) => m === 'GET' || m === 'HEAD')) return;
    const own = route.onSend;
    route.onSend = own === undefined ? [noteWrite] : [...(Array.isArray(own) ? own : [own]), noteWrite];
  });
}

/**
 * Builds the HTTP app around already-opened services. The server (src/server.ts) and the tests
 * both use this; it opens nothing itself.
 */
export async function buildApp(ctx: AppContext, opts: BuildOptions = {}) {
  const { config } = ctx;
  const app = Fastify({
    ...(typeof opts.logger === 'object' ? { loggerInstance: opts.logger } : { logger: opts.logger ?? false }),
    genReqId,
    frameworkErrors,
    logController: new RequestLogController([KEY_IN_TEXT, SECRET_IN_TEXT]),
    bodyLimit: config.bodyLimit,
    // Fastify's default 0 turns off Node's request timeout: a client that sends headers and part
    // of a body would hold its connection for ever. Node checks the deadlines every
    // connectionsCheckingInterval (its default 30 s would double a 30 s timeout).
    requestTimeout: config.requestTimeoutMs,
    http: {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: config.requestTimeoutMs,
      requireHostHeader: false,
      connectionsCheckingInterval: Math.max(5, Math.min(1000, Math.floor(config.requestTimeoutMs / 4))),
    },
    clientErrorHandler: clientErrorHandler(config.requestTimeoutMs),
    trustProxy: config.trustProxy,
    // Ours answers in our error shape (src/http/client-error.ts).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // The serializer's own ajv only needs to know our formats exist; values are validated on input.
    serializerOpts: { ajv: { formats: { money: true, percent: true, iso4217: true } } },
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory() } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('ctx', ctx);
  app.decorateRequest('principal', null as never);
  app.decorateRequest('idempotencyKey', undefined);
  registerRouteMemo(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(errorHandler);
  registerJsonParser(app);
  registerContentEncoding(app);
  registerNotFound(app);
  registerUnknownInputRule(app);
  registerOptionalBody(app);

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // After the request-id hook and on the root, before any route: see src/http/cors.ts.
  registerCors(app);
  registerProtocolChecks(app);
  registerEtag(app);

  // /v1 aliases get their own operationIds so the OpenAPI document stays valid.
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { operationId?: string } | undefined;
    if (route.url.startsWith('/v1/') && schema?.operationId) {
      route.schema = { ...schema, operationId: `${schema.operationId}V1Alias` };
    }
  });

  await registerOpenApi(app);
  registerHealth(app);
  registerMetrics(app, ctx.limiter);
  // The web dashboard's files at /dashboard, with their own security headers (src/dashboard).
  await app.register(dashboardRoutes);
  // The unsubscribe link of mails: no API key (src/email).
  await app.register(emailPublicRoutes);
  await app.register(apiV1, { prefix: '/api/v1' });
  await app.register(apiV1, { prefix: '/v1' });
  return app;
}

export type App = Awaited<ReturnType<typeof buildApp>>;

/**
 * Requests to `app` made in this process (Fastify inject: the whole HTTP pipeline, auth and rate
 * limits included, without a socket). The owner channel's `api` operation and the CLI's commands
 * on an account's data use it (src/owner-channel/operations.ts).
 */
export function apiInjector(app: () => App | undefined): ApiInjector {
  return async ({ method, url, key, body, headers }) => {
    const target = app();
    if (!target) throw new Error('the HTTP API is not running yet');
    const res = await target.inject({
      method,
      url,
      headers: {
        ...headers,
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(res.headers))
      if (value !== undefined) out[name.toLowerCase()] = String(value);
    return { status: res.statusCode, headers: out, body: res.body };
  };
}
