import type { Database, Queryable } from '../db/types.js';
import { isUniqueViolation } from '../db/types.js';
import {
  atomicBatchError,
  invalidItem,
  invalidItems,
  isFailure,
  type ItemFailure,
  type ItemResult,
} from '../batches/batch.js';
import { type ApiError, ERRORS } from '../http/errors.js';
import { recordEvent, recordEvents } from '../events/service.js';
import { newId } from '../ids.js';
import { eachPage, pageRequest } from '../pagination/page.js';
import { type ProductCreate, ProductCreateSchema, type ProductListQuery, type ProductUpdate } from './schemas.js';
import {
  deleteProduct,
  findProductIdBySku,
  insertProduct,
  insertProducts,
  listProducts,
  type NewProduct,
  PRODUCT_SORTS,
  type ProductChanges,
  type ProductRow,
  toProduct,
  updateProduct,
} from './sql.js';

const SKU_CONSTRAINT = 'products_account_sku_key';

export function toNewProduct(body: ProductCreate): NewProduct {
  return {
    id: newId('prod'),
    name: body.name,
    brand: body.brand ?? null,
    sku: body.sku ?? null,
    category: body.category ?? null,
    description: body.description ?? null,
    base_price: body.base_price,
    currency: body.currency.toUpperCase(),
    url: body.url ?? null,
  };
}

async function skuConflict(db: Queryable, accountId: string, sku: string): Promise<ApiError> {
  const owner = await findProductIdBySku(db, accountId, sku);
  return ERRORS.conflict('A product with this SKU already exists in this account', [
    { field: 'sku', message: owner ? `is already used by product ${owner}` : 'is already used by another product' },
  ]);
}

/** Each change commits with its event (docs/EVENTS.md): `product.created`, `.updated`, `.deleted`. */
export async function createProduct(db: Database, accountId: string, body: ProductCreate): Promise<ProductRow> {
  const p = toNewProduct(body);
  try {
    return await db.transaction(async (tx) => {
      const row = await insertProduct(tx, accountId, p);
      await recordEvent(tx, accountId, 'product.created', toProduct(row));
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err, SKU_CONSTRAINT) && p.sku) throw await skuConflict(db, accountId, p.sku);
    throw err;
  }
}

export async function changeProduct(
  db: Database,
  accountId: string,
  id: string,
  body: ProductUpdate,
): Promise<ProductRow> {
  const changes: ProductChanges = { ...body };
  if (typeof body.currency === 'string') changes.currency = body.currency.toUpperCase();
  const changesSomething = Object.values(changes).some((v) => v !== undefined);
  try {
    return await db.transaction(async (tx) => {
      const row = await updateProduct(tx, accountId, id, changes);
      if (!row) throw ERRORS.notFound('Product');
      if (changesSomething) await recordEvent(tx, accountId, 'product.updated', toProduct(row));
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err, SKU_CONSTRAINT) && typeof body.sku === 'string')
      throw await skuConflict(db, accountId, body.sku);
    throw err;
  }
}

/** Its listings, alerts and history go with it; the event tells of the product only. */
export async function removeProduct(db: Database, accountId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await deleteProduct(tx, accountId, id);
    if (!row) throw ERRORS.notFound('Product');
    await recordEvent(tx, accountId, 'product.deleted', toProduct(row));
  });
}

/** Thrown inside the batch transaction to roll it back when an atomic batch has a failure. */
class AtomicBatchFailed extends Error {}

const BATCH_WORDS = { resources: 'products', nothing: 'nothing was created' };

const skuTaken = (index: number, owner: string | undefined): ItemFailure => ({
  index,
  status: 409,
  code: 'conflict',
  error: 'A product with this SKU already exists in this account',
  details: [{ field: 'sku', message: owner ? `is already used by product ${owner}` : 'is already used' }],
});

/**
 * Creates products in one statement (POST /products/batch): each item validated on its own, a
 * SKU repeated within the batch or already taken is that item's 409. With `atomic`, any failure
 * creates nothing and throws one error listing each failed item.
 */
export async function createProductsBatch(
  db: Database,
  accountId: string,
  items: unknown[],
  atomic: boolean,
): Promise<ItemResult<ProductRow>[]> {
  const invalid = invalidItems(items, ProductCreateSchema);
  const results: ItemResult<ProductRow>[] = [];
  const toInsert: { index: number; p: NewProduct }[] = [];
  const skus = new Map<string, number>();
  items.forEach((item, index) => {
    const details = invalid.get(index);
    if (details) return results.push(invalidItem(index, details));
    const p = toNewProduct(item as ProductCreate);
    if (p.sku !== null) {
      const first = skus.get(p.sku);
      if (first !== undefined) {
        return results.push({
          index,
          status: 409,
          code: 'conflict',
          error: 'The SKU appears more than once in this batch',
          details: [{ field: 'sku', message: `is the same as item ${first}` }],
        });
      }
      skus.set(p.sku, index);
    }
    toInsert.push({ index, p });
  });

  if (atomic && results.length > 0) throw atomicBatchError(results, 'products', BATCH_WORDS);

  try {
    await db.transaction(async (tx) => {
      const rows = await insertProducts(
        tx,
        accountId,
        toInsert.map((t) => t.p),
      );
      await recordEvents(
        tx,
        accountId,
        rows.map((r) => ({ type: 'product.created' as const, data: toProduct(r) })),
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const { index, p } of toInsert) {
        const row = byId.get(p.id);
        if (row) results.push({ index, status: 201, row });
        else results.push(skuTaken(index, p.sku ? await findProductIdBySku(tx, accountId, p.sku) : undefined));
      }
      if (atomic && results.some(isFailure)) throw new AtomicBatchFailed();
    });
  } catch (err) {
    if (err instanceof AtomicBatchFailed) throw atomicBatchError(results, 'products', BATCH_WORDS);
    throw err;
  }
  return results;
}

/** Products per query when an export walks the catalogue. */
export const CATALOGUE_WALK_ROWS = 500;

/**
 * The account's products that match the filters and sort of GET /products, a page per query,
 * without their monitoring summaries: for exports of other areas that go product by product
 * (GET /prices.csv). Run `checkListFilters` on the query first.
 */
export function catalogueProductPages(
  db: Queryable,
  accountId: string,
  q: Omit<ProductListQuery, 'limit' | 'cursor'>,
): AsyncGenerator<ProductRow[]> {
  const page = pageRequest({ sort: q.sort, limit: CATALOGUE_WALK_ROWS }, PRODUCT_SORTS, '-created_at');
  return eachPage(page, (p) => listProducts(db, accountId, q, p, { monitoring: false }));
}
