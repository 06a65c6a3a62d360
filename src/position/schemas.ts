import { type Static, Type } from 'typebox';
import { ConvertedMoney, OrNull, ResourceId, SignedAmount, Text } from '../http/fields.js';

/** `monitoring.position` of a product: the compact form of the position (src/position/sql.ts). */
export const ProductPositionSchema = Type.Object(
  {
    own_price: ConvertedMoney(
      "Our current price in the product's currency: our own series' latest observation, else base_price; null when our latest is in a currency no rate converts",
    ),
    own_price_source: Type.String({ enum: ['observation', 'base_price'], description: 'Where `own_price` comes from' }),
    competitors_compared: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'Competitors whose latest price is compared (in stock or unknown, convertible)',
    }),
    competitors_left_out: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'Competitors with a price left out: out of stock or no exchange rate',
    }),
    rank: OrNull(Type.Integer({ format: 'int32', minimum: 1, maximum: 2_147_483_647 }), {
      description:
        '1 + the compared competitors strictly cheaper than us (ties share a place); null when none is compared or our price has no rate',
    }),
    price_index: SignedAmount('own_price / average compared price x 100, 2 decimals; null when it cannot be computed'),
    cheapest: OrNull(
      Type.Object(
        {
          competitor_id: ResourceId('comp'),
          name: Text(200, "The competitor's name"),
          price: Type.Number({ minimum: 0, description: "Its latest price converted into the product's currency" }),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'The cheapest compared competitor (of those tied, the one with the smallest id), as `cheapest` of GET /positions; null when none is compared',
      },
    ),
  },
  {
    title: 'ProductPosition',
    additionalProperties: false,
    description:
      "Where our price stands among the competitors' latest prices, as GET /products/{id}/trends computes it",
  },
);
export type ProductPosition = Static<typeof ProductPositionSchema>;
