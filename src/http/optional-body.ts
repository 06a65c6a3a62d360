import type { FastifyInstance, preValidationHookHandler } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * POSTs whose body may be left out (a webhook's test and rotate-secret): no body, or an
     * empty one, is read as `{}` so the schema's defaults apply, and the OpenAPI document says
     * `requestBody.required: false` (src/openapi/operation.ts), so that clients generated from
     * it need not send one.
     */
    optionalBody?: boolean;
  }
}

const emptyBodyAsObject: preValidationHookHandler = (request, _reply, done) => {
  if (request.body === undefined || request.body === null) request.body = {};
  done();
};

/** Gives every `config.optionalBody` route, as it is added, the hook that reads no body as `{}`. */
export function registerOptionalBody(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!route.config?.optionalBody) return;
    const existing = route.preValidation;
    route.preValidation =
      existing === undefined
        ? [emptyBodyAsObject]
        : [emptyBodyAsObject, ...([] as preValidationHookHandler[]).concat(existing as never)];
  });
}
