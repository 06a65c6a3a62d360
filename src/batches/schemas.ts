import { type TArray, type TBoolean, type TInteger, type TObject, type TOptional, type TSchema, Type } from 'typebox';
import { ErrorDetailSchema } from '../http/schemas.js';

/** Items per batch request (POST /products/batch, POST /prices): the spec's "combine operations". */
export const BATCH_MAX = 1000;

/** The request body: `{"<field>": [items], "atomic": bool}`. */
export function batchBodySchema<K extends string, T extends TSchema>(field: K, item: T, title: string, atomicMeans: string) {
  const properties = {
    [field]: Type.Array(item, { minItems: 1, maxItems: BATCH_MAX }),
    atomic: Type.Optional(Type.Boolean({ default: false, description: atomicMeans })),
  } as { [P in K]: TArray<T> } & { atomic: TOptional<TBoolean> };
  return Type.Object(properties, { title, additionalProperties: false });
}

/** A failed item of a batch. */
export const BatchItemErrorSchema = Type.Object(
  {
    code: Type.String({ maxLength: 50 }),
    error: Type.String({ maxLength: 2000 }),
    details: Type.Optional(Type.Array(ErrorDetailSchema, { maxItems: 100 })),
  },
  { additionalProperties: false },
);

/**
 * The answer: `data` holds each item's outcome by index (the resource under `resource` on
 * success, `error` otherwise), then how many succeeded and failed.
 */
export function batchResultSchema<K extends string, T extends TSchema>(
  resource: K,
  item: T,
  statuses: { values: number[]; description?: string },
  title: string,
) {
  const outcome = {
    index: Type.Integer({ format: 'int32', minimum: 0, maximum: BATCH_MAX - 1 }),
    status: Type.Integer({ format: 'int32', enum: statuses.values, ...(statuses.description ? { description: statuses.description } : {}) }),
    [resource]: Type.Optional(item),
    error: Type.Optional(BatchItemErrorSchema),
  } as { index: TInteger; status: TInteger } & { [P in K]: TOptional<T> } & { error: TOptional<typeof BatchItemErrorSchema> };
  return Type.Object(
    {
      data: Type.Array(Type.Object(outcome, { additionalProperties: false }) as TObject<typeof outcome>, { maxItems: BATCH_MAX }),
      created: Type.Integer({ format: 'int32', minimum: 0, maximum: BATCH_MAX }),
      failed: Type.Integer({ format: 'int32', minimum: 0, maximum: BATCH_MAX }),
    },
    { title, additionalProperties: false },
  );
}
