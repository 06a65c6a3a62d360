import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * One structured log line per request, when it completes (Fastify's default is two). Health,
 * readiness and metrics probes log at debug unless they fail.
 */
export class RequestLogController extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    const quiet = request.routeOptions.logLevel === 'warn' && reply.statusCode < 400;
    request.log[error || reply.statusCode >= 500 ? 'error' : quiet ? 'debug' : 'info'](
      {
        method: request.method,
        url: request.url,
        route: request.routeOptions.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        account_id: request.principal?.accountId,
        ip: request.ip,
        ...(error ? { err: error } : {}),
      },
      'request',
    );
  }
}
