import type { FastifyRequest } from 'fastify';

/**
 * A preValidation hook for POSTs whose body is optional (rotate-secret, test): no body, or an
 * empty one, is read as `{}` so the schema's defaults apply and clients may send nothing.
 */
export async function emptyBodyAsObject(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}
