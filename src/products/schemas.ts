import { type Static, Type } from 'typebox';
import { batchBodySchema, batchResultSchema } from '../batches/schemas.js';
import {
  Currency,
  HttpUrl,
  Money,
  Nullable,
  OrNull,
  RequiredText,
  ResourceId,
  Text,
  Timestamp,
} from '../http/fields.js';
import { checkRange } from '../pagination/filters.js';
import { CursorQuery, LimitQuery, listOf, SortQuery } from '../pagination/schemas.js';
import { ProductPositionSchema } from '../position/schemas.js';

const fields = {
  name: RequiredText(200, 'Product name'),
  brand: Text(100, 'Brand of the product'),
  sku: RequiredText(100, 'Stock keeping unit; unique within the account'),
  category: Text(100, 'Product category'),
  description: Text(10_000, 'Free-text description'),
  base_price: Money('Base price of the product'),
  currency: Currency,
  url: HttpUrl('Address of the product page'),
};

export const ProductCreateSchema = Type.Object(
  {
    name: fields.name,
    brand: Type.Optional(Nullable(fields.brand)),
    sku: Type.Optional(Nullable(fields.sku)),
    category: Type.Optional(Nullable(fields.category)),
    description: Type.Optional(Nullable(fields.description)),
    base_price: fields.base_price,
    currency: fields.currency,
    url: Type.Optional(Nullable(fields.url)),
  },
  { title: 'ProductCreate', additionalProperties: false },
);
export type ProductCreate = Static<typeof ProductCreateSchema>;

/** PUT and PATCH: only the fields sent change; `null` clears an optional field. */
export const ProductUpdateSchema = Type.Object(
  {
    name: Type.Optional(fields.name),
    brand: Type.Optional(Nullable(fields.brand)),
    sku: Type.Optional(Nullable(fields.sku)),
    category: Type.Optional(Nullable(fields.category)),
    description: Type.Optional(Nullable(fields.description)),
    base_price: Type.Optional(fields.base_price),
    currency: Type.Optional(fields.currency),
    url: Type.Optional(Nullable(fields.url)),
  },
  { title: 'ProductUpdate', additionalProperties: false },
);
export type ProductUpdate = Static<typeof ProductUpdateSchema>;

/** Read-only: what the product's listings say, computed with the product (docs/API-DECISIONS.md, "Listings"). */
export const ProductMonitoringSchema = Type.Object(
  {
    listing_count: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'Listings of the product: its pages at competitors and on our own shop',
    }),
    lowest_competitor_price: OrNull(
      Type.Object(
        {
          price: Money('The lowest latest price'),
          currency: fields.currency,
          competitor_id: ResourceId('comp'),
          listing_id: ResourceId('lst'),
          observed_at: Nullable(Timestamp('When a check found this price')),
        },
        { additionalProperties: false },
      ),
      {
        description:
          "The lowest latest price among the enabled competitor listings priced in the product's currency (other " +
          'currencies are never converted) whose offer was not last seen out of stock; null when there is none',
      },
    ),
    last_checked_at: Nullable(Timestamp('When any of its listings was last checked; null: never')),
    position: ProductPositionSchema,
  },
  {
    title: 'ProductMonitoring',
    additionalProperties: false,
    description: "The product's monitoring summary (read-only)",
  },
);

export const ProductSchema = Type.Object(
  {
    id: ResourceId('prod'),
    object: Type.Literal('product'),
    name: fields.name,
    brand: Nullable(fields.brand),
    sku: Nullable(fields.sku),
    category: Nullable(fields.category),
    description: Nullable(fields.description),
    base_price: fields.base_price,
    currency: fields.currency,
    url: Nullable(fields.url),
    created_at: Timestamp('When the product was created (RFC 3339, UTC)'),
    updated_at: Timestamp('When the product last changed (RFC 3339, UTC)'),
    monitoring: ProductMonitoringSchema,
  },
  { title: 'Product', additionalProperties: false },
);
export type Product = Static<typeof ProductSchema>;

export const ProductListSchema = listOf(ProductSchema, 'ProductList');

export const PRODUCT_SORT_FIELDS = [
  'created_at',
  'updated_at',
  'name',
  'base_price',
  'sku',
  'brand',
  'category',
] as const;

export const ProductListQuerySchema = Type.Object(
  {
    limit: Type.Optional(LimitQuery),
    cursor: Type.Optional(CursorQuery),
    sort: Type.Optional(SortQuery(PRODUCT_SORT_FIELDS, '-created_at')),
    category: Type.Optional(Text(100, 'Exact category')),
    brand: Type.Optional(Text(100, 'Exact brand')),
    sku: Type.Optional(Text(100, 'Exact SKU')),
    currency: Type.Optional(Currency),
    min_price: Type.Optional(Money('Lowest base_price, inclusive')),
    max_price: Type.Optional(Money('Highest base_price, inclusive')),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: '^[^\\u0000]*$',
        description: 'Case-insensitive text over name, brand, sku and description',
      }),
    ),
    created_after: Type.Optional(Timestamp('Created at or after this instant')),
    created_before: Type.Optional(Timestamp('Created before this instant')),
  },
  { additionalProperties: false },
);
export type ProductListQuery = Static<typeof ProductListQuerySchema>;

/** The checks across filters that a schema cannot say; GET /products and GET /products.csv both run them. */
export function checkListFilters(q: ProductListQuery): void {
  checkRange(q, 'min_price', 'max_price');
  checkRange(q, 'created_after', 'created_before');
}

/** GET /products.csv: the filters and sort of GET /products, without pages (the file holds every product). */
export const ProductCatalogueQuerySchema = Type.Omit(ProductListQuerySchema, ['limit', 'cursor'], {
  additionalProperties: false,
});

export const ProductIdParams = Type.Object({ id: ResourceId('prod') });

export const ProductBatchSchema = batchBodySchema(
  'products',
  ProductCreateSchema,
  'ProductBatchCreate',
  "true: create all or none (422, or 409 when every failure is a SKU conflict, with every item's problems when any fails)",
);

export const ProductBatchResultSchema = batchResultSchema(
  'product',
  ProductSchema,
  { values: [201, 409, 422] },
  'ProductBatchResult',
);
