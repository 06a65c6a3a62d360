import { type Dispatcher, errors as undiciErrors, request } from 'undici';
import { AddressGuard, type AddressPolicy } from '../../fetcher/address-guard.js';
import { createGuardedAgent } from '../../fetcher/agent.js';
import { FetchError } from '../../fetcher/types.js';

/**
 * One HTTP attempt to an endpoint, through undici with the SSRF guard of page fetches at connect
 * time (src/fetcher/agent.ts): a name resolving to a private address is refused before a socket
 * exists; loopback only with ALLOW_LOOPBACK_TARGETS. Redirects are not followed (undici's
 * request follows none): a 3xx is an answer like any other non-2xx, a failure.
 */

/** The first bytes of the answer kept for the delivery log; the rest is not read. */
export const RESPONSE_BODY_BYTES = 1024;
const ERROR_MAX = 1000;

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SendResult {
  /** The HTTP status; undefined without an answer. */
  status?: number;
  /** The first RESPONSE_BODY_BYTES of the answer, as text. */
  body?: string;
  /** The Retry-After header of the answer. */
  retryAfter?: string;
  /** Why there was no (complete) answer: timeout, refused, DNS, a blocked address. */
  error?: string;
  durationMs: number;
}

export interface SenderOptions extends AddressPolicy {
  /** The whole attempt (connect, headers, the part of the body read), in ms (WEBHOOK_TIMEOUT). */
  timeoutMs: number;
  /** Replaces the guard (tests). */
  guard?: AddressGuard;
}

export class WebhookSender {
  private readonly agent: Dispatcher;
  private readonly timeoutMs: number;

  constructor(opts: SenderOptions) {
    this.timeoutMs = opts.timeoutMs;
    const guard =
      opts.guard ?? new AddressGuard({ allowLoopback: opts.allowLoopback, allowTargets: opts.allowTargets });
    this.agent = createGuardedAgent(guard, {
      timeoutMs: opts.timeoutMs,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
  }

  async send(req: SendRequest): Promise<SendResult> {
    const t0 = performance.now();
    const signal = AbortSignal.timeout(this.timeoutMs);
    const ms = () => Math.round(performance.now() - t0);
    let status: number | undefined;
    try {
      const res = await request(req.url, {
        method: 'POST',
        headers: req.headers,
        body: req.body,
        dispatcher: this.agent,
        signal,
      });
      status = res.statusCode;
      const retryAfter = res.headers['retry-after'];
      const chunks: Buffer[] = [];
      let bytes = 0;
      // Leaving the loop early destroys the stream: the rest of a long answer is never read.
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        bytes += chunk.length;
        if (bytes >= RESPONSE_BODY_BYTES) break;
      }
      return {
        status,
        body: logText(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_BYTES)),
        ...(retryAfter !== undefined ? { retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter } : {}),
        durationMs: ms(),
      };
    } catch (err) {
      return { ...(status !== undefined ? { status } : {}), error: describe(err, this.timeoutMs), durationMs: ms() };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** Text a PostgreSQL text column takes (no NUL), cut to whole characters. */
function logText(buf: Buffer): string {
  return new TextDecoder('utf-8', { fatal: false })
    .decode(buf)
    .replace(/\uFFFD$/, '')
    .replaceAll('\u0000', '');
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: unknown };
  let text: string;
  if (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError
  ) {
    text = `timeout: no complete answer within ${timeoutMs} ms`;
  } else if (err instanceof FetchError) {
    text = `${err.code}: ${err.message}`;
  } else {
    const cause = e.cause as { code?: string; message?: string } | undefined;
    const code = e.code ?? cause?.code;
    if (code === 'ECONNREFUSED') text = 'connection refused';
    else if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') text = 'connection reset before a complete answer';
    else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') text = 'the host name does not resolve';
    else text = [code, e.message ?? String(err)].filter(Boolean).join(': ');
  }
  return text.length > ERROR_MAX ? text.slice(0, ERROR_MAX) : text;
}
