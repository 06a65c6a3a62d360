import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { batchCreateProductsRoute } from './routes/batch-create-products.js';
import { createProductRoute } from './routes/create-product.js';
import { deleteProductRoute } from './routes/delete-product.js';
import { exportProductCatalogueCsvRoute } from './routes/export-product-catalogue-csv.js';
import { getProductRoute } from './routes/get-product.js';
import { listProductsRoute } from './routes/list-products.js';
import { updateProductRoute } from './routes/update-product.js';

/** /products: spec part 4, endpoints 1-5, plus batch create, PATCH and the catalogue as CSV. */
export const productRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(listProductsRoute);
  await app.register(createProductRoute);
  await app.register(batchCreateProductsRoute);
  await app.register(getProductRoute);
  await app.register(updateProductRoute);
  await app.register(deleteProductRoute);
  await app.register(exportProductCatalogueCsvRoute);
};
