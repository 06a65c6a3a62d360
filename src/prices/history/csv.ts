import type { CsvValue } from '../../http/csv.js';
import { iso } from '../../http/fields.js';
import { publicId } from '../../ids.js';
import type { ObservationRow } from './sql.js';

/** The columns of a raw history CSV (GET /products/{id}/prices.csv?interval=raw): one observation a row. */
export const RAW_HEADER = [
  'observed_at',
  'competitor_id',
  'competitor_name',
  'listing_id',
  'price',
  'currency',
  'in_stock',
  'source',
  'samples',
  'price_sum',
  'id',
] as const;

const num = (v: string | number | null) => (v === null ? null : Number(v));

export function rawCells(r: ObservationRow): CsvValue[] {
  return [
    iso(r.observed_at),
    r.competitor_id,
    r.competitor_name,
    r.listing_id,
    num(r.price),
    r.currency,
    r.in_stock,
    r.source,
    num(r.samples),
    num(r.price_sum),
    publicId('obs', r.id!),
  ];
}

/** GET /prices.csv: the same columns, after the product's id and SKU. */
export const ACCOUNT_RAW_HEADER = ['product_id', 'sku', ...RAW_HEADER] as const;
