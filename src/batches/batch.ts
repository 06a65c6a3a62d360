import type { FastifySchemaCompiler } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { type ApiError, ERRORS, type ErrorDetail } from '../http/errors.js';
import { compileBodyValidator, toDetails, validatorCompiler } from '../http/validation.js';
import { BATCH_MAX } from './schemas.js';

/**
 * Endpoints that take up to BATCH_MAX items and answer each item's outcome (POST /products/batch,
 * POST /prices). The route validates only the envelope, so that one bad item is that item's
 * result instead of failing the request; the service validates each item, then (with
 * `atomic`) either does all or nothing.
 */

/** An item's outcome: done (`row`), or failed with a code and the problems. */
export type ItemResult<R> =
  | { index: number; status: 201; row: R }
  | { index: number; status: number; code: string; error: string; details: ErrorDetail[] };

export type ItemFailure = Extract<ItemResult<never>, { code: string }>;

export const isFailure = <R>(r: ItemResult<R>): r is ItemFailure => r.status !== 201;

/** The route options of a batch endpoint whose items sit in `field`: body limit, retries safe, envelope-only validation. */
export function batchRoute(
  field: string,
  bodyLimit: number,
): { bodyLimit: number; config: { idempotent: true }; validatorCompiler: FastifySchemaCompiler<TSchema> } {
  const envelope = Type.Object(
    {
      [field]: Type.Array(Type.Unknown(), { minItems: 1, maxItems: BATCH_MAX }),
      atomic: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  );
  return {
    bodyLimit,
    config: { idempotent: true },
    validatorCompiler: (req) => validatorCompiler(req.httpPart === 'body' ? { ...req, schema: envelope } : req),
  };
}

/** Each item checked against its schema: index -> problems, for the items that break it. */
export function invalidItems(items: unknown[], itemSchema: TSchema): Map<number, ErrorDetail[]> {
  const validate = compileBodyValidator(itemSchema);
  const invalid = new Map<number, ErrorDetail[]>();
  items.forEach((item, i) => {
    if (!validate(item)) invalid.set(i, toDetails(validate.errors ?? []));
  });
  return invalid;
}

/** The 422 of an item that breaks its schema or a rule. */
export const invalidItem = (index: number, details: ErrorDetail[]): ItemFailure => ({
  index,
  status: 422,
  code: 'validation_failed',
  error: 'The item has invalid fields',
  details,
});

/** The answer: each item's outcome by index, the resource under `resource`, and the counts. */
export function batchAnswer<R, T, K extends string>(results: ItemResult<R>[], resource: K, toResource: (row: R) => T) {
  const sorted = [...results].sort((a, b) => a.index - b.index);
  const created = sorted.filter((r) => r.status === 201).length;
  return {
    data: sorted.map((r) =>
      isFailure(r)
        ? { index: r.index, status: r.status, error: { code: r.code, error: r.error, details: r.details } }
        : ({ index: r.index, status: 201, [resource]: toResource(r.row) } as { index: number; status: 201 } & Record<
            K,
            T
          >),
    ),
    created,
    failed: sorted.length - created,
  };
}

/**
 * One error for an atomic batch that failed: every failed item's problems, each field named
 * `<field>[i].<name>`; 409 when every failure is a conflict (with existing `resources`), else
 * 422. `nothing` ends the message ("nothing was created").
 */
export function atomicBatchError<R>(
  results: ItemResult<R>[],
  field: string,
  words: { resources: string; nothing: string },
): ApiError {
  const failed = results.filter(isFailure).sort((a, b) => a.index - b.index);
  const details = failed.flatMap((r) =>
    // '(body)' is the item itself (e.g. not an object): name it by its index alone.
    r.details.map((d) => ({
      field: d.field === '(body)' ? `${field}[${r.index}]` : `${field}[${r.index}].${d.field}`,
      message: d.message,
    })),
  );
  return failed.every((r) => r.status === 409)
    ? ERRORS.conflict(`${failed.length} item(s) conflict with existing ${words.resources}; ${words.nothing}`, details)
    : ERRORS.validation(details, `${failed.length} item(s) are invalid; ${words.nothing}`);
}
