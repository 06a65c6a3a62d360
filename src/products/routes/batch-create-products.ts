import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ErrorDetail } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { compileBodyValidator, toDetails, validatorCompiler } from '../../http/validation.js';
import { BATCH_MAX, ProductBatchSchema, ProductCreateSchema, ProductBatchResultSchema } from '../schemas.js';
import { createProductsBatch } from '../service.js';
import { toProduct } from '../sql.js';

// The route validates only the envelope, so one bad item is reported as that item's result
// instead of failing the whole request; items are checked below with the same ProductCreate schema.
const Envelope = Type.Object(
  {
    products: Type.Array(Type.Unknown(), { minItems: 1, maxItems: BATCH_MAX }),
    atomic: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const batchCreateProductsRoute: FastifyPluginAsyncTypebox = async (app) => {
  const validateItem = compileBodyValidator(ProductCreateSchema);
  app.post(
    '/products/batch',
    {
      bodyLimit: app.ctx.config.batchBodyLimit,
      config: { idempotent: true },
      validatorCompiler: (req) => validatorCompiler(req.httpPart === 'body' ? { ...req, schema: Envelope } : req),
      schema: {
        operationId: 'batchCreateProducts',
        summary: 'Create up to 1000 products',
        description:
          'Each item is validated and created on its own and reported in `data` with its index and status ' +
          '(201, 409 for a taken or repeated SKU, 422 for invalid fields). With `atomic: true` either every item ' +
          'is created or none is, and the failures come back as one 422 (or 409) error.',
        tags: ['Products'],
        body: ProductBatchSchema,
        response: { 200: withHeaders(ProductBatchResultSchema, 'Per-item results'), ...errorResponses(409, 413, 415, 422) },
      },
    },
    async (request) => {
      const body = request.body as { products: unknown[]; atomic?: boolean };
      const invalid = new Map<number, ErrorDetail[]>();
      body.products.forEach((item, i) => {
        if (!validateItem(item)) invalid.set(i, toDetails(validateItem.errors ?? []));
      });
      const results = await createProductsBatch(app.ctx.db, request.principal.accountId, body.products, invalid, body.atomic ?? false);
      const created = results.filter((r) => r.status === 201).length;
      return {
        data: results.map((r) =>
          r.status === 201
            ? { index: r.index, status: r.status, product: toProduct(r.row) }
            : { index: r.index, status: r.status, error: { code: r.code, error: r.error, details: r.details } },
        ),
        created,
        failed: results.length - created,
      };
    },
  );
};
