import type { Queryable } from '../../db/types.js';
import { convertedSql, rateJoin } from '../../money/convert.js';
import { positionSql } from '../../position/sql.js';
import { ALERT_EVENT_COLUMNS, type AlertEventRow } from '../alert-event.js';
import { type RuleState, stateKey } from './machine.js';
import type { CheckPoint, ObservationPoint } from './point.js';
import type { EngineRule } from './rule.js';

/** Statements of the alert engine (docs/alerts/firing.md): each a fixed cost for any batch. */

/** An alert_events row to insert (acknowledged_at null, created_at now()). */
export type NewAlertEvent = Omit<AlertEventRow, 'acknowledged_at' | 'created_at' | 'sequence'> & { sequence: number | null };

/** Inserts every firing in one statement, in the order given. */
export async function insertAlertEvents(db: Queryable, accountId: string, rows: readonly NewAlertEvent[]): Promise<AlertEventRow[]> {
  if (rows.length === 0) return [];
  const r = await db.query<AlertEventRow>(
    `/* insertAlertEvents */
     insert into alert_events (id, account_id, alert_id, condition_type, product_id, competitor_id, listing_id,
                               previous, current, message, test, sequence)
     select e.v->>'id', $1, e.v->>'alert_id', e.v->>'condition_type', e.v->>'product_id', e.v->>'competitor_id',
            e.v->>'listing_id', nullif(e.v->'previous', 'null'::jsonb), nullif(e.v->'current', 'null'::jsonb),
            e.v->>'message', (e.v->>'test')::boolean, (e.v->>'sequence')::bigint
       from jsonb_array_elements($2::jsonb) with ordinality as e(v, n)
      order by e.n
     returning ${ALERT_EVENT_COLUMNS}`,
    [accountId, JSON.stringify(rows)],
  );
  return r.rows;
}

/** The account's enabled rules, oldest first: the one query an account without rules pays. */
export async function loadEnabledRules(db: Queryable, accountId: string): Promise<EngineRule[]> {
  const r = await db.query<EngineRule>(
    `/* loadEnabledRules */
     select id, product_id, competitor_id, listing_id, condition_type, condition, rearm,
            hysteresis_percent::text as hysteresis_percent, cooldown_seconds, confirmations, daily_cap
       from alerts where account_id = $1 and enabled
      order by created_at, id`,
    [accountId],
  );
  return r.rows.map((x) => ({ ...x, cooldown_seconds: Number(x.cooldown_seconds), confirmations: Number(x.confirmations), daily_cap: x.daily_cap === null ? null : Number(x.daily_cap) }));
}

/**
 * A subquery over the observations of the series of the row `o` (with product_id and
 * competitor_id) matching `cond`, ending with `tail`. Two branches, one per kind of series, so
 * each probes price_observations_series_time with equality on (product_id, competitor_id); the
 * branch that does not apply is cut at planning.
 */
function inSeries(columns: string, cond: string, tail: string, o = 'o'): string {
  return `((select ${columns} from price_observations x
             where ${o}.competitor_id is not null and x.product_id = ${o}.product_id and x.competitor_id = ${o}.competitor_id and ${cond} ${tail})
           union all
           (select ${columns} from price_observations x
             where ${o}.competitor_id is null and x.product_id = ${o}.product_id and x.competitor_id is null and ${cond} ${tail}))`;
}

interface PointRow {
  id: number;
  product_id: string;
  competitor_id: string | null;
  listing_id: string | null;
  price: string;
  currency: string;
  in_stock: boolean | null;
  observed_at: Date;
  source: string;
  product_name: string;
  product_currency: string;
  competitor_name: string | null;
  prev_price: string | null;
  prev_currency: string | null;
  prev_in_stock: boolean | null;
  prev_observed_at: Date | null;
  sequence: number | string | null;
  late: boolean;
}

/**
 * Observations as points, in time order, with the series' previous observation and the
 * sequence of the change each made. `ids` selects them (a subquery of `id`, `late`: it
 * arrived after a newer observation of its series, and `prev_*`: the series' observation just
 * before it; $1 is the account).
 */
async function loadPoints(db: Queryable, name: string, ids: string, params: unknown[]): Promise<ObservationPoint[]> {
  const sql = `/* ${name} */
     select o.id, o.product_id, o.competitor_id, o.listing_id, o.price::text as price, o.currency, o.in_stock, o.observed_at, o.source,
            p.name as product_name, p.currency as product_currency, c.name as competitor_name,
            k.prev_price::text as prev_price, k.prev_currency, k.prev_in_stock, k.prev_observed_at,
            ch.sequence, k.late
       from (${ids}) k
       join price_observations o on o.id = k.id and o.account_id = $1
       join products p on p.id = o.product_id
       left join competitors c on c.id = o.competitor_id
       left join price_changes ch on ch.observation_id = o.id
      order by o.observed_at, o.id`;
  const r = await db.query<PointRow>(sql, params);
  return r.rows.map((x) => ({
    kind: 'observation',
    observation_id: Number(x.id),
    product_id: x.product_id,
    competitor_id: x.competitor_id,
    listing_id: x.listing_id,
    price: x.price,
    currency: x.currency,
    in_stock: x.in_stock,
    observed_at: x.observed_at,
    source: x.source,
    product_name: x.product_name,
    product_currency: x.product_currency,
    competitor_name: x.competitor_name,
    previous:
      x.prev_price === null ? null : { price: x.prev_price, currency: x.prev_currency!, in_stock: x.prev_in_stock, observed_at: x.prev_observed_at! },
    sequence: x.sequence === null ? null : Number(x.sequence),
    late: x.late,
  }));
}

/**
 * The points of observations just inserted (`ids`). Late: older than the newest observation of
 * the series from before them (found once per series, stepping back over the batch's own rows).
 * `recordedAt` (a batch evaluated after its commit, backlog.ts): the batch's created_at; only
 * observations recorded by then count as before it, as when it was inserted.
 */
export const loadNewPoints = (db: Queryable, accountId: string, ids: readonly number[], recordedAt: Date | null = null) =>
  loadPoints(
    db,
    'loadNewAlertPoints',
    // The observation before one that is not late is the newest from before the batch or the
    // batch's own one before it: a window over those, as the price_observations trigger does.
    `with batch as materialized (select unnest($2::bigint[]) as id),
          b as materialized (select o.id, o.product_id, o.competitor_id, o.price, o.currency, o.in_stock, o.observed_at
                               from price_observations o join batch on batch.id = o.id where o.account_id = $1),
          s as (select distinct product_id, competitor_id from b),
          pre as materialized (
            select s.product_id, s.competitor_id, l.id, l.price, l.currency, l.in_stock, l.observed_at
              from s cross join lateral ${inSeries(
                'x.id, x.price, x.currency, x.in_stock, x.observed_at',
                'x.id not in (select id from batch) and ($3::timestamptz is null or x.created_at <= $3)',
                'order by x.observed_at desc, x.id desc limit 1',
                's',
              )} l),
          w as (select id, product_id, competitor_id, price, currency, in_stock, observed_at, true as fresh from b
                union all
                select id, product_id, competitor_id, price, currency, in_stock, observed_at, false from pre),
          lagged as (
            select w.*, lag(price) over s as prev_price, lag(currency) over s as prev_currency,
                   lag(in_stock) over s as prev_in_stock, lag(observed_at) over s as prev_observed_at
              from w window s as (partition by product_id, competitor_id order by observed_at, id))
     select g.id, g.prev_price, g.prev_currency, g.prev_in_stock, g.prev_observed_at,
            coalesce((g.observed_at, g.id) < (pre.observed_at, pre.id), false) as late
       from lagged g
       left join pre on pre.product_id = g.product_id and pre.competitor_id is not distinct from g.competitor_id
      where g.fresh`,
    [accountId, ids, recordedAt],
  );

export interface PointScope {
  product_id: string | null;
  competitor_id: string | null;
  listing_id: string | null;
  /** true: our own series only; false: competitors' only; null: both. */
  own: boolean | null;
  from: string;
  to: string;
  limit: number;
}

/**
 * The stored points of a scope observed in [from, to), at most `limit` + 1 (so the caller can
 * tell there are more). Late: a newer observation of the series was recorded by an earlier
 * transaction (created_at; observations before `from` cannot be newer, so they are not read).
 * The previous observation is the newest older one that was there when it arrived, as live.
 */
export function loadStoredPoints(db: Queryable, accountId: string, s: PointScope): Promise<ObservationPoint[]> {
  return loadPoints(
    db,
    'loadStoredAlertPoints',
    `select w.id, w.late, pv.price as prev_price, pv.currency as prev_currency, pv.in_stock as prev_in_stock, pv.observed_at as prev_observed_at
       from (
       select id, product_id, competitor_id, observed_at, created_at,
              coalesce(observed_at < max(observed_at) over (partition by product_id, competitor_id order by created_at
                                                            range between unbounded preceding and current row exclude group), false) as late
         from price_observations
        where account_id = $1 and observed_at >= $2::timestamptz
          and ($4::text is null or product_id = $4) and ($5::text is null or competitor_id = $5)
          and ($7::boolean is null or (competitor_id is null) = $7)
     ) w
     left join lateral ${inSeries('x.price, x.currency, x.in_stock, x.observed_at', '(x.observed_at, x.id) < (w.observed_at, w.id) and x.created_at <= w.created_at', 'order by x.observed_at desc, x.id desc limit 1', 'w')} pv on true
      where w.observed_at < $3::timestamptz and ($6::text is null or w.id in (select id from price_observations where listing_id = $6))
      order by w.observed_at, w.id limit ${s.limit + 1}`,
    [accountId, s.from, s.to, s.product_id, s.competitor_id, s.listing_id, s.own],
  );
}

/** Our price (in the product's currency) and rank of each product, as src/position defines them, now. */
export async function loadPositions(db: Queryable, accountId: string, productIds: readonly string[]): Promise<Map<string, { own_price: string | null; rank: number | null }>> {
  const r = await db.query<{ id: string; own_price: string | null; rank: number | null }>(
    `/* loadAlertPositions */
     select p.id, pos.own_price::text as own_price, pos.rank
       from products p cross join lateral ${positionSql('p')} pos
      where p.account_id = $1 and p.id = any($2::text[])`,
    [accountId, productIds],
  );
  return new Map(r.rows.map((x) => [x.id, { own_price: x.own_price, rank: x.rank === null ? null : Number(x.rank) }]));
}

/** The distinct numbers of days to look back: positive integers only (they are written into SQL text). */
const windowsOf = (days: readonly number[]) => [...new Set(days)].filter((d) => Number.isInteger(d) && d > 0);

/** Rows of `low_<i>` columns, one per window, as observation id -> days -> low. */
function lowsByDays(rows: readonly Record<string, unknown>[], windows: readonly number[]): Map<number, Map<number, string | null>> {
  return new Map(rows.map((x) => [Number(x.id), new Map(windows.map((d, i) => [d, (x[`low_${i}`] as string | null) ?? null]))]));
}

/**
 * For each observation and each number of days, the lowest earlier price of its series within
 * that many days before it (among those recorded by then), converted into the observation's currency with the account's rates
 * (prices no rate converts are left out); null when there is none.
 */
export async function loadLows(db: Queryable, accountId: string, ids: readonly number[], days: readonly number[]): Promise<Map<number, Map<number, string | null>>> {
  const windows = windowsOf(days);
  if (ids.length === 0 || windows.length === 0) return new Map();
  // One scan of each observation's series over the longest window, aggregated where it is read
  // (no rows to sort and group afterwards); every number of days is a filter over it. The days
  // are integers (checked above) written into the text, never user text.
  const lows = windows.map((d, i) => `(min(seen.conv) filter (where seen.observed_at >= o.observed_at - interval '${d} days'))::text as low_${i}`);
  const r = await db.query<Record<string, unknown> & { id: number }>(
    `/* loadAlertLows */
     select o.id, h.*
       from price_observations o
       left join lateral (
         select ${lows.join(', ')}
           from (select ${convertedSql('y.price', 'fx', 'y.currency', 'o.currency')} as conv, y.observed_at
                   from ${inSeries('x.price, x.currency, x.observed_at', `x.observed_at >= o.observed_at - make_interval(days => $3::int) and (x.observed_at, x.id) < (o.observed_at, o.id) and x.created_at <= o.created_at`, '')} y
                   ${rateJoin('fx', 'o.account_id', 'y.currency', 'o.currency')}) seen
       ) h on true
      where o.account_id = $1 and o.id = any($2::bigint[])`,
    [accountId, ids, Math.max(...windows)],
  );
  return lowsByDays(r.rows, windows);
}

/**
 * loadLows of a batch just recorded (live evaluation), with the same answers and less reading:
 * a batch holds a few observations of each series close together, whose windows mostly overlap.
 * Per series, t1 and tk are the batch's first and last instants there; every window
 * [t - days, t) of the batch then holds the shared part [tk - days, t1), read once per series,
 * plus its own edges [t - days, tk - days) and [t1, t) (with the same instant's lower ids), a
 * few rows each. When the batch spans more than the window the shared part is empty and the
 * edges cover the whole window. All of a batch was recorded at once: "recorded by then" is one
 * bound per series.
 */
export async function loadBatchLows(db: Queryable, accountId: string, ids: readonly number[], days: readonly number[]): Promise<Map<number, Map<number, string | null>>> {
  const windows = windowsOf(days);
  if (ids.length === 0 || windows.length === 0) return new Map();
  const span = (d: number) => `interval '${d} days'`;
  const converted = (rows: string, to: string) =>
    `(select ${convertedSql('y.price', 'fx', 'y.currency', to)} as conv, y.observed_at from ${rows} y ${rateJoin('fx', '$1', 'y.currency', to)})`;
  const shared = `select ${windows.map((d, i) => `min(seen.conv) filter (where seen.observed_at >= s.tk - ${span(d)}) as shared_${i}`).join(', ')}
      from ${converted(inSeries('x.price, x.currency, x.observed_at', `x.observed_at >= s.tk - ${span(Math.max(...windows))} and x.observed_at < s.t1 and x.created_at <= s.c`, '', 's'), 's.target')} seen`;
  // Windows are integers (checked above) written into the text, never user text.
  const edges = windows.map((d, i) => `(select min(seen.conv) from ${converted(
    `(${inSeries('x.price, x.currency, x.observed_at', `x.observed_at >= b.observed_at - ${span(d)} and x.observed_at < least(s.tk - ${span(d)}, b.observed_at) and x.created_at <= s.c`, '', 'b')}
      union all ${inSeries('x.price, x.currency, x.observed_at', `x.observed_at >= greatest(s.t1, b.observed_at - ${span(d)}) and (x.observed_at, x.id) < (b.observed_at, b.id) and x.created_at <= s.c`, '', 'b')})`,
    'b.currency',
  )} seen) as edge_${i}`);
  const r = await db.query<Record<string, unknown> & { id: number }>(
    `/* loadAlertBatchLows */
     with b as materialized (
       select o.id, o.product_id, o.competitor_id, o.currency, o.observed_at, o.created_at
         from price_observations o where o.account_id = $1 and o.id = any($2::bigint[])),
     s as materialized (
       select product_id, competitor_id, currency as target, min(observed_at) as t1, max(observed_at) as tk, max(created_at) as c
         from b group by product_id, competitor_id, currency),
     shared as materialized (select s.*, sh.* from s cross join lateral (${shared}) sh)
     select b.id, ${windows.map((_, i) => `least(s.shared_${i}, e.edge_${i})::text as low_${i}`).join(', ')}
       from b
       join shared s on s.product_id = b.product_id and coalesce(s.competitor_id, '') = coalesce(b.competitor_id, '') and s.target = b.currency
       cross join lateral (select ${edges.join(',\n              ')}) e`,
    [accountId, ids],
  );
  return lowsByDays(r.rows, windows);
}

interface StateRow {
  alert_id: string;
  subject: string;
  streak: number;
  armed: boolean;
  last_fired_at: Date | null;
  cap_day: string | null;
  cap_count: number;
  last_value: string | null;
}

/**
 * The states of the (rule, subject) pairs given, by `alertId \0 subject` (and maybe others of the
 * same rules and subjects, which nobody asks for). The distinct rules and subjects are sent, not
 * every pair: a batch's pairs are (rules x series), its parameters (rules + series).
 */
export async function loadStates(db: Queryable, keys: readonly { alert_id: string; subject: string }[]): Promise<Map<string, RuleState>> {
  if (keys.length === 0) return new Map();
  const r = await db.query<StateRow>(
    `/* loadAlertStates */
     select s.alert_id, s.subject, s.streak, s.armed, s.last_fired_at, s.cap_day::text as cap_day, s.cap_count, s.last_value::text as last_value
       from alert_states s
      where s.alert_id = any($1::text[]) and s.subject = any($2::text[])`,
    [[...new Set(keys.map((k) => k.alert_id))], [...new Set(keys.map((k) => k.subject))]],
  );
  return new Map(
    r.rows.map((x) => [
      stateKey(x.alert_id, x.subject),
      {
        streak: Number(x.streak),
        armed: x.armed,
        last_fired_at: x.last_fired_at === null ? null : x.last_fired_at.getTime(),
        cap_day: x.cap_day,
        cap_count: Number(x.cap_count),
        last_value: x.last_value,
      },
    ]),
  );
}

/** Writes the states that moved, in one statement. */
export async function saveStates(db: Queryable, rows: readonly { alert_id: string; subject: string; state: RuleState }[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `/* saveAlertStates */
     insert into alert_states (alert_id, subject, streak, armed, last_fired_at, cap_day, cap_count, last_value, updated_at)
     select k.alert_id, k.subject, k.streak, k.armed, k.last_fired_at, k.cap_day, k.cap_count, k.last_value, now()
       from unnest($1::text[], $2::text[], $3::int[], $4::boolean[], $5::timestamptz[], $6::date[], $7::int[], $8::numeric[])
         as k (alert_id, subject, streak, armed, last_fired_at, cap_day, cap_count, last_value)
     on conflict (alert_id, subject) do update set
       streak = excluded.streak, armed = excluded.armed, last_fired_at = excluded.last_fired_at, cap_day = excluded.cap_day,
       cap_count = excluded.cap_count, last_value = excluded.last_value, updated_at = now()`,
    [
      rows.map((x) => x.alert_id),
      rows.map((x) => x.subject),
      rows.map((x) => x.state.streak),
      rows.map((x) => x.state.armed),
      rows.map((x) => (x.state.last_fired_at === null ? null : new Date(x.state.last_fired_at).toISOString())),
      rows.map((x) => x.state.cap_day),
      rows.map((x) => x.state.cap_count),
      rows.map((x) => x.state.last_value),
    ],
  );
}

/** A failed check of `listingId` as a point (failures in a row, the listing's product and competitor). */
export async function loadCheckPoint(db: Queryable, accountId: string, listingId: string, failures: number, at: Date): Promise<CheckPoint | null> {
  const r = await db.query<{ product_id: string; competitor_id: string | null; product_name: string; competitor_name: string | null }>(
    `/* loadAlertCheckPoint */
     select l.product_id, l.competitor_id, p.name as product_name, c.name as competitor_name
       from listings l join products p on p.id = l.product_id left join competitors c on c.id = l.competitor_id
      where l.id = $2 and l.account_id = $1`,
    [accountId, listingId],
  );
  const x = r.rows[0];
  return x ? { kind: 'check', listing_id: listingId, ...x, failures, observed_at: at } : null;
}

/** Whether the account has a batch waiting in alert_backlog (then new ones queue behind it). */
export async function hasBacklog(db: Queryable, accountId: string): Promise<boolean> {
  const r = await db.query<{ waiting: boolean }>(`/* hasAlertBacklog */ select exists (select 1 from alert_backlog where account_id = $1) as waiting`, [accountId]);
  return r.rows[0]!.waiting;
}

/** Queues a batch for evaluation after commit (migrations/0007: the insert wakes the evaluators). */
export async function queueBacklog(db: Queryable, accountId: string, observationIds: readonly number[]): Promise<void> {
  await db.query(`/* queueAlertBacklog */ insert into alert_backlog (account_id, observation_ids) values ($1, $2::bigint[])`, [accountId, observationIds]);
}

export interface QueuedBatch {
  id: number;
  account_id: string;
  observation_ids: number[];
  created_at: Date;
}

/**
 * Locks the oldest queued batch whose account has no older one (an older one still present is
 * being evaluated by another worker: the account's batches go in order), skipping those other
 * workers hold; null when there is none.
 */
export async function claimBacklog(db: Queryable): Promise<QueuedBatch | null> {
  const r = await db.query<{ id: number | string; account_id: string; observation_ids: (number | string)[]; created_at: Date }>(
    `/* claimAlertBacklog */
     select b.id, b.account_id, b.observation_ids, b.created_at
       from alert_backlog b
      where not exists (select 1 from alert_backlog o where o.account_id = b.account_id and o.id < b.id)
      order by b.id
      limit 1
        for update skip locked`,
  );
  const x = r.rows[0];
  return x ? { id: Number(x.id), account_id: x.account_id, observation_ids: x.observation_ids.map(Number), created_at: x.created_at } : null;
}

export async function deleteBacklog(db: Queryable, id: number): Promise<void> {
  await db.query(`/* deleteAlertBacklog */ delete from alert_backlog where id = $1`, [id]);
}
