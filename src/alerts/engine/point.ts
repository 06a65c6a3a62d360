/**
 * What the engine judges: a new observation of a price series with what its conditions compare
 * it with, or a failed check of a listing. Loaded set-based (engine/sql.ts), the same way for
 * live evaluation and for a preview.
 */

export interface PriceSide {
  /** Exact decimal text. */
  price: string;
  currency: string;
  in_stock: boolean | null;
  observed_at: Date;
}

export interface ObservationPoint extends PriceSide {
  kind: 'observation';
  observation_id: number;
  product_id: string;
  competitor_id: string | null;
  listing_id: string | null;
  source: string;
  product_name: string;
  product_currency: string;
  competitor_name: string | null;
  /** The series' observation just before this one; null for its first. */
  previous: PriceSide | null;
  /** The sequence of the change this observation made in its series; null when it made none. */
  sequence: number | null;
  /** Older than the series' latest when it arrived: never fires, moves no state. */
  late: boolean;
  /** Filled only when a rule needs them: our price (the product's currency) and rank, from src/position. */
  own_price?: string | null;
  rank?: number | null;
  /** Lowest earlier price of the series within `days` days (in this observation's currency), by days. */
  lows?: Map<number, string | null>;
}

export interface CheckPoint {
  kind: 'check';
  listing_id: string;
  product_id: string;
  competitor_id: string | null;
  product_name: string;
  competitor_name: string | null;
  /** Failed checks in a row, this one included. */
  failures: number;
  observed_at: Date;
}

export type Point = ObservationPoint | CheckPoint;
