import type { FastifyReply } from 'fastify';

/**
 * A signal that aborts when the client goes away before its answer was sent (it closed the
 * connection, or gave up waiting): long work for it can stop. Node emits 'close' on the response
 * both when it was sent and when the connection ended first; only the second aborts.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort(new Error('the client went away'));
  });
  return gone.signal;
}
