import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { ALLOW_ORIGIN, EXPOSED_HEADERS } from './cors.js';
import type { ApiError } from './errors.js';
import { errorBody, ERRORS } from './errors.js';
import { genReqId } from './request-id.js';

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (a malformed request line, a
 * header block over the limit, Content-Length together with Transfer-Encoding, a request or body
 * that did not arrive within REQUEST_TIMEOUT): Fastify's `clientErrorHandler`. They are answered
 * with our one error body, X-Request-Id and the CORS headers, then the connection is closed, as
 * Node does (what follows on it cannot be trusted to start at a request boundary).
 */
export function toClientApiError(err: NodeJS.ErrnoException, requestTimeoutMs: number): ApiError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return ERRORS.requestTimeout(requestTimeoutMs);
    case 'HPE_HEADER_OVERFLOW':
      return ERRORS.headersTooLarge();
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return ERRORS.invalidRequest(
        'A request may not have both Content-Length and Transfer-Encoding, nor an invalid Transfer-Encoding',
      );
    case 'HPE_INVALID_CONTENT_LENGTH':
      return ERRORS.invalidRequest('The Content-Length header is not valid');
    default:
      return ERRORS.invalidRequest('The request is not well-formed HTTP/1.1');
  }
}

/** The raw HTTP/1.1 response of a client error: we write it to the socket ourselves. */
export function rawErrorResponse(apiError: ApiError, requestId: string): string {
  const body = JSON.stringify(errorBody(apiError, requestId));
  return [
    `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    `Access-Control-Allow-Origin: ${ALLOW_ORIGIN}`,
    `Access-Control-Expose-Headers: ${EXPOSED_HEADERS.join(', ')}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

export function clientErrorHandler(requestTimeoutMs: number) {
  return function onClientError(this: { log: FastifyBaseLogger }, err: NodeJS.ErrnoException, socket: Socket) {
    // A connection reset or already closed: nobody to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const apiError = toClientApiError(err, requestTimeoutMs);
    const requestId = genReqId({ headers: {} } as never);
    // A client's mistake or a slow network, not ours: one line, no stack trace.
    this.log.info(
      { request_id: requestId, code: apiError.code, reason: err.code ?? err.message },
      'client error: answered and connection closed',
    );
    // Node's own rule: answer only while no response to this connection has begun.
    const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !current?.headersSent)
      socket.end(rawErrorResponse(apiError, requestId), () => socket.destroy());
    else socket.destroy();
  };
}

/**
 * What Node and Fastify would otherwise answer themselves, outside our error shape: an HTTP/1.1
 * request without Host (Node's empty 400; `requireHostHeader: false` hands it to us), and a
 * request arriving while the server closes (Fastify's own 503 body; `return503OnClosing: false`).
 * A JSON body without Content-Type (a route with its own serializer) gets ours.
 */
export function registerProtocolChecks(app: FastifyInstance) {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (closing) {
      reply.header('Connection', 'close');
      return done(ERRORS.unavailable('The server is shutting down; retry on another connection'));
    }
    if (request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1 && !request.headers.host) {
      return done(ERRORS.invalidRequest('An HTTP/1.1 request needs a Host header'));
    }
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (typeof payload === 'string' && !reply.hasHeader('content-type')) reply.type('application/json; charset=utf-8');
    done(null, payload);
  });
  answerWhatNodeWould(app);
}

/**
 * Two requests Node answers itself, before Fastify, outside our error shape: an `Expect` other
 * than `100-continue` (a bare 417 with no body) and CONNECT (the connection closed without a
 * word). An unknown expectation is ignored and the request served as any other (RFC 9110 10.1.1
 * allows either); CONNECT, which asks for a tunnel that this server never opens, is a 400 in our
 * shape, and the connection is closed.
 */
function answerWhatNodeWould(app: FastifyInstance) {
  const server = app.server;
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    server.emit('request', req, res);
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => undefined);
    const requestId = genReqId({ headers: {} } as never);
    const apiError = ERRORS.invalidRequest('CONNECT is not supported: this server is not a proxy');
    app.log.info(
      { request_id: requestId, code: apiError.code, reason: 'CONNECT', target: String(req.url).slice(0, 200) },
      'client error: answered and connection closed',
    );
    socket.end(rawErrorResponse(apiError, requestId), () => socket.destroy());
  });
}
