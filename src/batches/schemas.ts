import {
  type Static,
  type TArray,
  type TBoolean,
  type TInteger,
  type TLiteral,
  type TObject,
  type TOptional,
  type TSchema,
  Type,
} from 'typebox';
import { ErrorDetailSchema } from '../http/schemas.js';

/** Items per batch request (POST /products/batch, POST /prices): the spec's "combine operations". */
export const BATCH_MAX = 1000;

/** The request body: `{"<field>": [items], "atomic": bool}`. */
export function batchBodySchema<K extends string, T extends TSchema>(
  field: K,
  item: T,
  title: string,
  atomicMeans: string,
) {
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
 *
 * `documented` says it as the document does: each outcome one of two variants told apart by
 * `status` (201 with the resource, or a failure with `error`), so a generated client narrows on
 * `status`. `shape` is the same answer with both fields optional, what the routes serialise with:
 * a union would make the serialiser validate every item against both variants to pick one
 * (the way get-price-history serialises its documented union).
 */
export function batchResultSchema<K extends string, T extends TSchema>(
  resource: K,
  item: T,
  statuses: { values: number[]; description?: string },
  title: string,
) {
  const index = Type.Integer({
    format: 'int32',
    minimum: 0,
    maximum: BATCH_MAX - 1,
    description: "The item's position in the request",
  });
  const counts = {
    created: Type.Integer({ format: 'int32', minimum: 0, maximum: BATCH_MAX }),
    failed: Type.Integer({ format: 'int32', minimum: 0, maximum: BATCH_MAX }),
  };
  const failures = statuses.values.filter((v) => v !== 201);
  const done = Type.Object(
    { index, status: Type.Literal(201), [resource]: item } as { index: TInteger; status: TLiteral<201> } & {
      [P in K]: T;
    },
    { title: `${title}Created`, description: 'An item done: 201 and the resource', additionalProperties: false },
  );
  const failed = Type.Object(
    {
      index,
      status: Type.Integer({
        format: 'int32',
        enum: failures,
        ...(statuses.description ? { description: statuses.description } : {}),
      }),
      error: BatchItemErrorSchema,
    },
    { title: `${title}Failed`, description: 'An item refused: its status and why', additionalProperties: false },
  );
  const outcome = Type.Unsafe<Static<typeof done> | Static<typeof failed>>({ oneOf: [done, failed] });
  const documented = Type.Object(
    { data: Type.Array(outcome, { maxItems: BATCH_MAX }), ...counts },
    { title, additionalProperties: false },
  );
  const loose = {
    index,
    status: Type.Integer({ format: 'int32', enum: statuses.values }),
    [resource]: Type.Optional(item),
    error: Type.Optional(BatchItemErrorSchema),
  } as { index: TInteger; status: TInteger } & { [P in K]: TOptional<T> } & {
    error: TOptional<typeof BatchItemErrorSchema>;
  };
  const shape = Type.Object(
    {
      data: Type.Array(Type.Object(loose, { additionalProperties: false }) as TObject<typeof loose>, {
        maxItems: BATCH_MAX,
      }),
      ...counts,
    },
    { additionalProperties: false },
  );
  return { documented, shape: shape as unknown as Record<string, unknown> };
}
