import type { Database, Queryable } from '../db/types.js';
import { isUniqueViolation } from '../db/types.js';
import type { ApiError} from '../http/errors.js';
import { ERRORS, type ErrorDetail } from '../http/errors.js';
import { newId } from '../ids.js';
import type { ProductCreate, ProductUpdate } from './schemas.js';
import {
  findProductIdBySku,
  insertProduct,
  insertProducts,
  type NewProduct,
  type ProductChanges,
  type ProductRow,
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

export async function createProduct(db: Database, accountId: string, body: ProductCreate): Promise<ProductRow> {
  const p = toNewProduct(body);
  try {
    return await insertProduct(db, accountId, p);
  } catch (err) {
    if (isUniqueViolation(err, SKU_CONSTRAINT) && p.sku) throw await skuConflict(db, accountId, p.sku);
    throw err;
  }
}

export async function changeProduct(db: Database, accountId: string, id: string, body: ProductUpdate): Promise<ProductRow> {
  const changes: ProductChanges = { ...body };
  if (typeof body.currency === 'string') changes.currency = body.currency.toUpperCase();
  try {
    const row = await updateProduct(db, accountId, id, changes);
    if (!row) throw ERRORS.notFound('Product');
    return row;
  } catch (err) {
    if (isUniqueViolation(err, SKU_CONSTRAINT) && typeof body.sku === 'string') throw await skuConflict(db, accountId, body.sku);
    throw err;
  }
}

export type BatchItemResult =
  | { index: number; status: 201; row: ProductRow }
  | { index: number; status: 409 | 422; code: string; error: string; details: ErrorDetail[] };

/** Thrown inside the batch transaction to roll it back when an atomic batch has a failure. */
class AtomicBatchFailed extends Error {}

/**
 * Creates products in one statement. `invalid` holds the items that already failed schema
 * validation (index -> details). With `atomic`, any failure creates nothing and throws a 422
 * (or 409 when every failure is a SKU conflict) listing each failed item.
 */
export async function createProductsBatch(
  db: Database,
  accountId: string,
  items: unknown[],
  invalid: Map<number, ErrorDetail[]>,
  atomic: boolean,
): Promise<BatchItemResult[]> {
  const results: BatchItemResult[] = [];
  const toInsert: { index: number; p: NewProduct }[] = [];
  const skus = new Map<string, number>();
  items.forEach((item, index) => {
    const details = invalid.get(index);
    if (details) {
      results.push({ index, status: 422, code: 'validation_failed', error: 'The item has invalid fields', details });
      return;
    }
    const p = toNewProduct(item as ProductCreate);
    if (p.sku !== null) {
      const first = skus.get(p.sku);
      if (first !== undefined) {
        results.push({
          index,
          status: 409,
          code: 'conflict',
          error: 'The SKU appears more than once in this batch',
          details: [{ field: 'sku', message: `is the same as item ${first}` }],
        });
        return;
      }
      skus.set(p.sku, index);
    }
    toInsert.push({ index, p });
  });

  if (atomic && results.length > 0) throw batchError(results);

  try {
    await db.transaction(async (tx) => {
      const rows = await insertProducts(tx, accountId, toInsert.map((t) => t.p));
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const { index, p } of toInsert) {
        const row = byId.get(p.id);
        if (row) results.push({ index, status: 201, row });
        else {
          const owner = p.sku ? await findProductIdBySku(tx, accountId, p.sku) : undefined;
          results.push({
            index,
            status: 409,
            code: 'conflict',
            error: 'A product with this SKU already exists in this account',
            details: [{ field: 'sku', message: owner ? `is already used by product ${owner}` : 'is already used' }],
          });
        }
      }
      if (atomic && results.some((r) => r.status !== 201)) throw new AtomicBatchFailed();
    });
  } catch (err) {
    if (err instanceof AtomicBatchFailed) throw batchError(results);
    throw err;
  }
  return results.sort((a, b) => a.index - b.index);
}

function batchError(results: BatchItemResult[]): ApiError {
  const failed = results.filter((r): r is Extract<BatchItemResult, { status: 409 | 422 }> => r.status !== 201);
  const details = failed
    .sort((a, b) => a.index - b.index)
    .flatMap((r) =>
      // '(body)' is the item itself (e.g. not an object): name it by its index alone.
      r.details.map((d) => ({ field: d.field === '(body)' ? `products[${r.index}]` : `products[${r.index}].${d.field}`, message: d.message })),
    );
  const allConflicts = failed.every((r) => r.status === 409);
  return allConflicts
    ? ERRORS.conflict(`${failed.length} item(s) conflict with existing products; nothing was created`, details)
    : ERRORS.validation(details, `${failed.length} item(s) are invalid; nothing was created`);
}
