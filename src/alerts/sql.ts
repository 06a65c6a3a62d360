import type { Queryable } from '../db/types.js';
import { accountWhere } from '../db/where.js';
import { iso } from '../http/fields.js';
import { type PageRequest, pageSql } from '../pagination/page.js';
import { type SortKey, textKey, timestampKey } from '../pagination/sort.js';
import { ALERT_EVENT_COLUMNS, type AlertEventRow } from './alert-event.js';
import type { Alert, ALERT_SORT_FIELDS, AlertEventListQuery, AlertListQuery, AlertRule, Condition } from './schemas.js';

/** Alert rules and the account's alert events, as parameterised SQL, always scoped by account. */

export interface AlertRow {
  id: string;
  account_id: string;
  name: string;
  product_id: string | null;
  competitor_id: string | null;
  listing_id: string | null;
  condition: Condition;
  condition_type: string;
  rearm: AlertRule['rearm'];
  hysteresis_percent: string | number;
  cooldown_seconds: number;
  confirmations: number;
  daily_cap: number | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export const ALERT_COLUMNS =
  'id, account_id, name, product_id, competitor_id, listing_id, condition, condition_type, rearm, hysteresis_percent, ' +
  'cooldown_seconds, confirmations, daily_cap, enabled, created_at, updated_at';

export function toAlert(r: AlertRow): Alert {
  return {
    id: r.id,
    object: 'alert',
    name: r.name,
    product_id: r.product_id,
    competitor_id: r.competitor_id,
    listing_id: r.listing_id,
    condition: r.condition,
    rearm: r.rearm,
    hysteresis_percent: Number(r.hysteresis_percent),
    cooldown_seconds: Number(r.cooldown_seconds),
    confirmations: Number(r.confirmations),
    daily_cap: r.daily_cap === null ? null : Number(r.daily_cap),
    enabled: r.enabled,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

const RULE_COLUMNS = [
  'name',
  'product_id',
  'competitor_id',
  'listing_id',
  'condition',
  'rearm',
  'hysteresis_percent',
  'cooldown_seconds',
  'confirmations',
  'daily_cap',
  'enabled',
] as const satisfies readonly (keyof AlertRule)[];

const CASTS: Partial<Record<(typeof RULE_COLUMNS)[number], string>> = {
  condition: '::jsonb',
  hysteresis_percent: '::numeric',
};

/** A rule field as a query parameter: the condition as JSON text, the hysteresis as exact decimal text. */
const param = (col: (typeof RULE_COLUMNS)[number], v: unknown) =>
  col === 'condition' ? JSON.stringify(v) : col === 'hysteresis_percent' ? String(v) : v;

export async function insertAlert(db: Queryable, accountId: string, id: string, rule: AlertRule): Promise<AlertRow> {
  const params: unknown[] = [id, accountId, rule.condition.type, ...RULE_COLUMNS.map((c) => param(c, rule[c]))];
  const r = await db.query<AlertRow>(
    `/* insertAlert */ insert into alerts (id, account_id, condition_type, ${RULE_COLUMNS.join(', ')})
     values ($1, $2, $3, ${RULE_COLUMNS.map((c, i) => `$${i + 4}${CASTS[c] ?? ''}`).join(', ')})
     returning ${ALERT_COLUMNS}`,
    params,
  );
  return r.rows[0]!;
}

export async function getAlert(
  db: Queryable,
  accountId: string,
  id: string,
  forUpdate = false,
): Promise<AlertRow | undefined> {
  const r = await db.query<AlertRow>(
    `/* getAlert */ select ${ALERT_COLUMNS} from alerts where id = $1 and account_id = $2${forUpdate ? ' for update' : ''}`,
    [id, accountId],
  );
  return r.rows[0];
}

/** Writes every rule field (the caller merged the changes into the stored rule and checked the whole). */
export async function updateAlert(
  db: Queryable,
  accountId: string,
  id: string,
  rule: AlertRule,
): Promise<AlertRow | undefined> {
  const params: unknown[] = [id, accountId, rule.condition.type, ...RULE_COLUMNS.map((c) => param(c, rule[c]))];
  const r = await db.query<AlertRow>(
    // Strictly later than before even within one millisecond, as for products.
    `/* updateAlert */ update alerts
        set condition_type = $3, ${RULE_COLUMNS.map((c, i) => `${c} = $${i + 4}${CASTS[c] ?? ''}`).join(', ')},
            updated_at = greatest(now(), updated_at + interval '1 millisecond')
      where id = $1 and account_id = $2
      returning ${ALERT_COLUMNS}`,
    params,
  );
  return r.rows[0];
}

export async function deleteAlert(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const r = await db.query('/* deleteAlert */ delete from alerts where id = $1 and account_id = $2', [id, accountId]);
  return r.rowCount > 0;
}

/**
 * Which of a rule's scope ids are in the account, and the listing's own product and competitor:
 * one statement, so a foreign id is told apart from a missing one nowhere (both are "not here").
 */
export interface ScopeRefs {
  product: boolean;
  competitor: boolean;
  listing: { product_id: string; competitor_id: string | null } | null;
}

export async function findScopeRefs(
  db: Queryable,
  accountId: string,
  ids: { product_id: string | null; competitor_id: string | null; listing_id: string | null },
): Promise<ScopeRefs> {
  const r = await db.query<{
    product: boolean;
    competitor: boolean;
    listing_product_id: string | null;
    listing_competitor_id: string | null;
    listing: boolean;
  }>(
    `/* findScopeRefs */ select exists (select 1 from products where id = $2 and account_id = $1) as product,
            exists (select 1 from competitors where id = $3 and account_id = $1) as competitor,
            l.id is not null as listing, l.product_id as listing_product_id, l.competitor_id as listing_competitor_id
       from (select 1) one
       left join listings l on l.id = $4 and l.account_id = $1`,
    [accountId, ids.product_id, ids.competitor_id, ids.listing_id],
  );
  const row = r.rows[0]!;
  return {
    product: row.product,
    competitor: row.competitor,
    listing: row.listing ? { product_id: row.listing_product_id!, competitor_id: row.listing_competitor_id } : null,
  };
}

export const ALERT_SORTS = {
  created_at: timestampKey('created_at', (r) => r.created_at),
  updated_at: timestampKey('updated_at', (r) => r.updated_at),
  name: textKey('name', (r) => r.name),
} satisfies Record<(typeof ALERT_SORT_FIELDS)[number], SortKey<AlertRow>>;

export async function listAlerts(
  db: Queryable,
  accountId: string,
  f: AlertListQuery,
  page: PageRequest<AlertRow>,
): Promise<AlertRow[]> {
  const { params, where, add } = accountWhere(accountId);
  if (f.enabled !== undefined) add((p) => `enabled = ${p}`, f.enabled);
  if (f.product_id !== undefined) add((p) => `product_id = ${p}`, f.product_id);
  if (f.competitor_id !== undefined) add((p) => `competitor_id = ${p}`, f.competitor_id);
  if (f.listing_id !== undefined) add((p) => `listing_id = ${p}`, f.listing_id);
  if (f.condition_type !== undefined) add((p) => `condition_type = ${p}`, f.condition_type);
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  const r = await db.query<AlertRow>(
    `/* listAlerts */ select ${ALERT_COLUMNS} from alerts where ${where.join(' and ')} order by ${keyset.orderBy} limit ${keyset.limit}`,
    params,
  );
  return r.rows;
}

// ---------------------------------------------------------------------------------------------
// Alert events (rows of `alert_events`; src/alerts/fired.ts writes them).

export const ALERT_EVENT_SORTS = {
  created_at: timestampKey('created_at', (r: AlertEventRow) => r.created_at),
};

export async function listAlertEvents(
  db: Queryable,
  accountId: string,
  f: AlertEventListQuery,
  page: PageRequest<AlertEventRow>,
): Promise<AlertEventRow[]> {
  const { params, where, add } = accountWhere(accountId);
  if (f.alert_id !== undefined) add((p) => `alert_id = ${p}`, f.alert_id);
  if (f.product_id !== undefined) add((p) => `product_id = ${p}`, f.product_id);
  if (f.competitor_id !== undefined) add((p) => `competitor_id = ${p}`, f.competitor_id);
  if (f.state === 'open') where.push('acknowledged_at is null');
  if (f.state === 'acknowledged') where.push('acknowledged_at is not null');
  if (f.created_after !== undefined) add((p) => `created_at >= ${p}::timestamptz`, f.created_after);
  if (f.created_before !== undefined) add((p) => `created_at < ${p}::timestamptz`, f.created_before);
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  const r = await db.query<AlertEventRow>(
    `/* listAlertEvents */ select ${ALERT_EVENT_COLUMNS} from alert_events where ${where.join(' and ')} order by ${keyset.orderBy} limit ${keyset.limit}`,
    params,
  );
  return r.rows;
}

export async function getAlertEvent(db: Queryable, accountId: string, id: string): Promise<AlertEventRow | undefined> {
  const r = await db.query<AlertEventRow>(
    `/* getAlertEvent */ select ${ALERT_EVENT_COLUMNS} from alert_events where id = $1 and account_id = $2`,
    [id, accountId],
  );
  return r.rows[0];
}

/**
 * Acknowledges the account's events among `ids` (one acknowledged before keeps its time) and
 * answers every one of them that is in the account, oldest first. The update is a CTE the select
 * cannot see, so the select says what it wrote: now() is the same within the statement, rounded
 * to the column's milliseconds as the stored value is.
 */
export async function acknowledgeAlertEvents(
  db: Queryable,
  accountId: string,
  ids: readonly string[],
): Promise<AlertEventRow[]> {
  const columns = ALERT_EVENT_COLUMNS.split(', ').map((c) =>
    c === 'acknowledged_at' ? 'coalesce(e.acknowledged_at, now()::timestamptz(3)) as acknowledged_at' : `e.${c}`,
  );
  const r = await db.query<AlertEventRow>(
    `/* acknowledgeAlertEvents */ with acked as (
       update alert_events set acknowledged_at = now()
        where account_id = $1 and id = any ($2::text[]) and acknowledged_at is null
     )
     select ${columns.join(', ')}
       from alert_events e
      where e.account_id = $1 and e.id = any ($2::text[])
      order by e.created_at, e.id`,
    [accountId, ids],
  );
  return r.rows;
}

/** Forgets what the rule remembered about its subjects (streaks, armed, cap): it starts afresh. */
export async function deleteAlertStates(db: Queryable, alertId: string): Promise<void> {
  await db.query('/* deleteAlertStates */ delete from alert_states where alert_id = $1', [alertId]);
}

/** The latest observation of a series in a rule's scope and the one before it (POST /alerts/{id}/test). */
export interface ScopeObservation {
  product_id: string;
  product_name: string;
  competitor_id: string | null;
  competitor_name: string | null;
  listing_id: string | null;
  price: string | number;
  currency: string;
  in_stock: boolean | null;
  observed_at: Date;
  prev_price: string | number | null;
  prev_currency: string | null;
  prev_in_stock: boolean | null;
  prev_observed_at: Date | null;
}

/**
 * `series`: which sellers' series count (`any` for a listing's failures). A rule on a listing
 * watches exactly its series, our own included, so its competitor (null or not) must match.
 */
export async function latestInScope(
  db: Queryable,
  accountId: string,
  scope: { product_id: string | null; competitor_id: string | null; listing_id: string | null },
  series: 'competitors' | 'own' | 'any',
): Promise<ScopeObservation | undefined> {
  const { params, where, add } = accountWhere(accountId);
  where[0] = 's.account_id = $1';
  where.push('s.latest_observed_at is not null');
  if (scope.product_id !== null) add((p) => `s.product_id = ${p}`, scope.product_id);
  if (scope.listing_id !== null) add((p) => `s.competitor_id is not distinct from ${p}::text`, scope.competitor_id);
  else if (scope.competitor_id !== null) add((p) => `s.competitor_id = ${p}`, scope.competitor_id);
  if (series === 'own') where.push('s.competitor_id is null');
  if (series === 'competitors') where.push('s.competitor_id is not null');
  const r = await db.query<ScopeObservation>(
    `/* latestInScope */ select s.product_id, p.name as product_name, s.competitor_id, c.name as competitor_name, s.latest_listing_id as listing_id,
            s.latest_price as price, s.latest_currency as currency, s.latest_in_stock as in_stock, s.latest_observed_at as observed_at,
            prev.price as prev_price, prev.currency as prev_currency, prev.in_stock as prev_in_stock, prev.observed_at as prev_observed_at
       from price_series s
       join products p on p.id = s.product_id
       left join competitors c on c.id = s.competitor_id
       left join lateral (
         select o.price, o.currency, o.in_stock, o.observed_at
           from price_observations o
          where o.product_id = s.product_id and o.competitor_id is not distinct from s.competitor_id
            and (o.observed_at, o.id) < (s.latest_observed_at, s.latest_observation_id)
          order by o.observed_at desc, o.id desc
          limit 1
       ) prev on true
      where ${where.join(' and ')}
      order by s.latest_observed_at desc, s.product_id, s.competitor_id nulls first
      limit 1`,
    params,
  );
  return r.rows[0];
}
