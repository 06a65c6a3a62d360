import type { Queryable } from '../db/types.js';
import { accountWhere } from '../db/where.js';
import { iso } from '../http/fields.js';
import { type PageRequest, pageSql } from '../pagination/page.js';
import type { SortKey } from '../pagination/sort.js';
import type { ExchangeRate } from './schemas.js';

/** Every exchange-rate query of the API, always scoped by account. */

export interface ExchangeRateRow {
  base: string;
  quote: string;
  rate: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'base, quote, rate, created_at, updated_at';

export function toExchangeRate(r: ExchangeRateRow): ExchangeRate {
  return {
    object: 'exchange_rate',
    base: r.base,
    quote: r.quote,
    rate: Number(r.rate),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export async function getExchangeRate(
  db: Queryable,
  accountId: string,
  base: string,
  quote: string,
): Promise<ExchangeRateRow | undefined> {
  const r = await db.query<ExchangeRateRow>(
    `/* getExchangeRate */ select ${COLUMNS} from exchange_rates where account_id = $1 and base = $2 and quote = $3`,
    [accountId, base, quote],
  );
  return r.rows[0];
}

/**
 * Sets the rate, in one statement; `created` tells a new pair from a changed one (xmax is 0 on a
 * freshly inserted row). updated_at moves only when the rate does, and then strictly forward.
 */
export async function putExchangeRate(
  db: Queryable,
  accountId: string,
  base: string,
  quote: string,
  rate: string,
): Promise<ExchangeRateRow & { created: boolean }> {
  const r = await db.query<ExchangeRateRow & { created: boolean }>(
    `/* putExchangeRate */
     insert into exchange_rates as e (account_id, base, quote, rate) values ($1, $2, $3, $4::numeric)
     on conflict (account_id, base, quote) do update
        set rate = excluded.rate,
            updated_at = case when e.rate = excluded.rate then e.updated_at
                              else greatest(now(), e.updated_at + interval '1 millisecond') end
     returning ${COLUMNS}, (xmax = 0) as created`,
    [accountId, base, quote, rate],
  );
  return r.rows[0]!;
}

export async function deleteExchangeRate(
  db: Queryable,
  accountId: string,
  base: string,
  quote: string,
): Promise<boolean> {
  const r = await db.query(
    `/* deleteExchangeRate */ delete from exchange_rates where account_id = $1 and base = $2 and quote = $3`,
    [accountId, base, quote],
  );
  return r.rowCount > 0;
}

const isCode = (v: unknown): v is string => typeof v === 'string' && /^[A-Z]{3}$/.test(v);

/** Rates have one order, by base then quote: the cursor holds the last pair. */
export const RATE_SORTS = {
  'base,quote': {
    expr: 'base',
    cast: '',
    value: (r) => r.base,
    accepts: isCode,
    tiebreak: { expr: 'quote', cast: '', of: (r) => r.quote, accepts: isCode },
  },
} satisfies Record<string, SortKey<ExchangeRateRow>>;

/** A page of the account's rates in (base, quote) order. */
export async function listExchangeRates(
  db: Queryable,
  accountId: string,
  f: { base?: string | undefined; quote?: string | undefined },
  page: PageRequest<ExchangeRateRow>,
): Promise<ExchangeRateRow[]> {
  const { params, where, add } = accountWhere(accountId);
  if (f.base !== undefined) add((p) => `base = ${p}`, f.base.toUpperCase());
  if (f.quote !== undefined) add((p) => `quote = ${p}`, f.quote.toUpperCase());
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  const r = await db.query<ExchangeRateRow>(
    `/* listExchangeRates */ select ${COLUMNS} from exchange_rates where ${where.join(' and ')}
      order by ${keyset.orderBy} limit ${keyset.limit}`,
    params,
  );
  return r.rows;
}
