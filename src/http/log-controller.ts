import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { routeOf } from './route-options.js';

/** Query parameters whose values are credentials by their name, whatever they hold. */
const CREDENTIAL_PARAM = /^(api[_-]?key|key|token|access[_-]?token|secret|password|auth|authorization)$/i;

/**
 * The URL as logged: values of credential-named query parameters, and anything matching
 * `secrets` (the shapes of our API keys and webhook secrets, given by the composition root)
 * anywhere in it, replaced by `[redacted]`, so a key pasted into a URL by mistake stays out of
 * the logs (test/hardening/secrets-in-logs.test.ts).
 */
export function loggableUrl(url: string, secrets: readonly RegExp[]): string {
  let out = url;
  for (const re of secrets) out = out.replace(re, '[redacted]');
  const q = out.indexOf('?');
  if (q < 0) return out;
  const params = out
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name);
      } catch {
        // an undecodable name is compared as sent
      }
      return CREDENTIAL_PARAM.test(name) ? `${pair.slice(0, eq)}=[redacted]` : pair;
    });
  return `${out.slice(0, q)}?${params.join('&')}`;
}

/**
 * One structured log line per request, when it completes (Fastify's default is two). Health,
 * readiness and metrics probes log at debug unless they fail.
 */
export class RequestLogController extends LogController {
  constructor(private readonly secrets: readonly RegExp[] = []) {
    super({ requestIdLogLabel: 'request_id' });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    const route = routeOf(request);
    const quiet = route.logLevel === 'warn' && reply.statusCode < 400;
    request.log[error || reply.statusCode >= 500 ? 'error' : quiet ? 'debug' : 'info'](
      {
        method: request.method,
        url: loggableUrl(request.url, this.secrets),
        route: route.url,
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
