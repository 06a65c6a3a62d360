import type { Queryable } from '../../db/types.js';
import { convertedSql, rateJoin } from '../../money/convert.js';
import { positionSql } from '../../position/sql.js';
import { ALERT_EVENT_COLUMNS, type AlertEventRow } from '../alert-event.js';
import { type RuleState, stateKey } from './machine.js';
import type { LowRow, SharedLows } from './lows.js';
import type { CheckPoint, ObservationPoint } from './point.js';
import type { EngineRule } from './rule.js';

/** Statements of the alert engine (docs/alerts/firing.md): each a fixed cost for any batch. */

/** An alert_events row to insert (acknowledged_at null, created_at now()). */
export type NewAlertEvent = Omit<AlertEventRow, 'acknowledged_at' | 'created_at' | 'sequence'> & {
  sequence: number | null;
};

/** Inserts every firing in one statement, in the order given. */
export async function insertAlertEvents(
  db: Queryable,
  accountId: string,
  rows: readonly NewAlertEvent[],
): Promise<AlertEventRow[]> {
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
  return r.rows.map((x) => ({
    ...x,
    cooldown_seconds: Number(x.cooldown_seconds),
    confirmations: Number(x.confirmations),
    daily_cap: x.daily_cap === null ? null : Number(x.daily_cap),
  }));
}

/**
 * A subquery over the observations of the series of the row `o` (with product_id and
 * competitor_id) matching `cond`, ending with `tail`. Two branches, one per kind of series, so
 * each probes the series index (price_observations_series_cover) with equality on (product_id, competitor_id); the
 * branch that does not apply is cut at planning.
 */
export function inSeries(columns: string, cond: string, tail: string, o = 'o'): string {
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
      x.prev_price === null
        ? null
        : {
            price: x.prev_price,
            currency: x.prev_currency!,
            in_stock: x.prev_in_stock,
            observed_at: x.prev_observed_at!,
          },
    sequence: x.sequence === null ? null : Number(x.sequence),
    late: x.late,
  }));
}

/**
 * The points of observations just inserted (`ids`). Late: older than the newest observation of
 * the series from before them (found once per series, stepping back over the batch's own rows).
 * "From before them" is the series' arrival order (src/prices/series-lock.ts): ids below the
 * batch's first in the series, so a batch evaluated after its commit (backlog.ts) sees what
 * it saw when it was inserted, whatever was recorded since.
 */
export const loadNewPoints = (db: Queryable, accountId: string, ids: readonly number[]) =>
  loadPoints(
    db,
    'loadNewAlertPoints',
    // The observation before one that is not late is the newest from before the batch or the
    // batch's own one before it: a window over those, as the price_observations trigger does.
    `/* loadNewPoints */ with batch as materialized (select unnest($2::bigint[]) as id),
          b as materialized (select o.id, o.product_id, o.competitor_id, o.price, o.currency, o.in_stock, o.observed_at
                               from price_observations o join batch on batch.id = o.id where o.account_id = $1),
          s as (select product_id, competitor_id, min(id) as first_id from b group by product_id, competitor_id),
          pre as materialized (
            select s.product_id, s.competitor_id, l.id, l.price, l.currency, l.in_stock, l.observed_at
              from s cross join lateral ${inSeries(
                'x.id, x.price, x.currency, x.in_stock, x.observed_at',
                'x.id < s.first_id',
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
    [accountId, ids],
  );

/** Our price (in the product's currency) and rank of each product, as src/position defines them, now. */
export async function loadPositions(
  db: Queryable,
  accountId: string,
  productIds: readonly string[],
): Promise<Map<string, { own_price: string | null; rank: number | null }>> {
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
export const windowsOf = (days: readonly number[]) =>
  [...new Set(days)].filter((d) => Number.isInteger(d) && d > 0 && d <= 366);

/** `t` minus `days` days of 24 hours, as SQL (`days` checked by windowsOf: never user text). */
const back = (t: string, days: number) => `${t} - interval '${days * 24} hours'`;

/** A series whose observations need their lows (src/alerts/engine/lows.ts). */
export interface LowSeries {
  product_id: string;
  competitor_id: string | null;
  /** The first and last instants of the observations that need lows, and the smallest of their ids. */
  t1: Date;
  tk: Date;
  first_id: number;
  /** The currencies of those observations. */
  currencies: readonly string[];
}

/** What `seriesLows` needs of one series: rows (all before `before` when it is given) and the shared minimums. */
export interface LowInputs {
  rows: LowRow[];
  shared: SharedLows;
}

/**
 * The inputs of lows for the observations of `series` that need them, for each number of days
 * in `windows` (docs/alerts/firing.md, "lowest_in_days"). Every window [t - days, t] of an
 * observation in [t1, tk] holds the part [tk - days, t1) that all of them share, which the
 * database reduces to one minimum per currency (over the rows recorded before the first of
 * them); the rest is read as rows: the edges [t1 - days, tk - days), the span [t1, tk] itself
 * (unless `before` is given: then the caller holds the rows from there on) and, rarely, rows of
 * the shared part recorded after the first of them. Two statements for any number of series;
 * rows read grow with the span of the observations, not with the windows' length.
 */
export async function loadLowInputs(
  db: Queryable,
  accountId: string,
  series: readonly LowSeries[],
  days: readonly number[],
  before: Date | null,
): Promise<LowInputs[]> {
  const windows = windowsOf(days);
  const out = series.map((): LowInputs => ({ rows: [], shared: new Map() }));
  if (series.length === 0 || windows.length === 0) return out;
  const widest = Math.max(...windows);
  const targets = series.flatMap((s, n) => s.currencies.map((currency) => ({ s, n, currency })));
  const shared = await db.query<Record<string, unknown> & { n: number; target: string; later: boolean }>(
    `/* loadAlertLowShared */
     select s.n, s.target, sh.*
       from unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[], $7::bigint[], $8::int[])
         as s (product_id, competitor_id, target, t1, tk, first_id, n)
       cross join lateral (
         select ${windows.map((d, i) => `(min(seen.conv) filter (where seen.observed_at >= ${back('s.tk', d)} and seen.id < s.first_id))::text as shared_${i}`).join(', ')},
                coalesce(bool_or(seen.id >= s.first_id), false) as later
           from (select ${convertedSql('y.price', 'fx', 'y.currency', 's.target')} as conv, y.observed_at, y.id
                   from ${inSeries('x.id, x.price, x.currency, x.observed_at', `x.observed_at >= ${back('s.tk', widest)} and x.observed_at < s.t1`, '', 's')} y
                   ${rateJoin('fx', '$1', 'y.currency', 's.target')}) seen
       ) sh`,
    [
      accountId,
      targets.map((t) => t.s.product_id),
      targets.map((t) => t.s.competitor_id),
      targets.map((t) => t.currency),
      targets.map((t) => t.s.t1.toISOString()),
      targets.map((t) => t.s.tk.toISOString()),
      targets.map((t) => t.s.first_id),
      targets.map((t) => t.n),
    ],
  );
  const later = new Set<number>();
  for (const row of shared.rows) {
    const n = Number(row.n);
    out[n]!.shared.set(row.target, new Map(windows.map((d, i) => [d, (row[`shared_${i}`] as string | null) ?? null])));
    if (row.later) later.add(n);
  }
  const clip = `($8::timestamptz is null or x.observed_at < $8)`;
  const ranges = [
    ...windows.map((d) => `x.observed_at >= ${back('s.t1', d)} and x.observed_at < ${back('s.tk', d)} and ${clip}`),
    `$8::timestamptz is null and x.observed_at >= s.t1 and x.observed_at <= s.tk`,
    `s.later and x.observed_at >= ${back('s.tk', widest)} and x.observed_at < s.t1 and x.id >= s.first_id and ${clip}`,
  ];
  const rows = await db.query<{ n: number; id: number; price: string; currency: string; observed_at: Date }>(
    `/* loadAlertLowRows */
     select s.n, r.id, r.price::text as price, r.currency, r.observed_at
       from unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::bigint[], $6::boolean[], $7::int[])
         as s (product_id, competitor_id, t1, tk, first_id, later, n)
       cross join lateral (${ranges.map((cond) => inSeries('x.id, x.price, x.currency, x.observed_at', cond, '', 's')).join(' union ')}) r`,
    [
      series.map((s) => s.product_id),
      series.map((s) => s.competitor_id),
      series.map((s) => s.t1.toISOString()),
      series.map((s) => s.tk.toISOString()),
      series.map((s) => s.first_id),
      series.map((_, n) => later.has(n)),
      series.map((_, n) => n),
      before?.toISOString() ?? null,
    ],
  );
  for (const r of rows.rows)
    out[Number(r.n)]!.rows.push({
      id: Number(r.id),
      at: r.observed_at.getTime(),
      price: r.price,
      currency: r.currency,
    });
  return out;
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
export async function loadStates(
  db: Queryable,
  keys: readonly { alert_id: string; subject: string }[],
): Promise<Map<string, RuleState>> {
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

/**
 * Locks the states of `subjects` for `alertIds` (creating fresh ones where none is stored) until
 * the transaction ends, in key order: a second transaction evaluating the same rule for the same
 * subject waits, then reads what the first wrote. Needed where two series meet in one state
 * (not_cheapest's product): a series' own states are already taken in turn under its lock
 * (src/prices/series-lock.ts).
 */
export async function lockStates(
  db: Queryable,
  alertIds: readonly string[],
  subjects: readonly string[],
): Promise<void> {
  if (alertIds.length === 0 || subjects.length === 0) return;
  await db.query(
    `/* lockAlertStates */
     insert into alert_states (alert_id, subject)
     select a.id, s.subject from unnest($1::text[]) as a (id) cross join unnest($2::text[]) as s (subject)
      order by 1, 2
     on conflict (alert_id, subject) do update set streak = alert_states.streak where false`,
    [[...new Set(alertIds)], [...new Set(subjects)]],
  );
}

/** Writes the states that moved, in one statement. */
export async function saveStates(
  db: Queryable,
  rows: readonly { alert_id: string; subject: string; state: RuleState }[],
): Promise<void> {
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
export async function loadCheckPoint(
  db: Queryable,
  accountId: string,
  listingId: string,
  failures: number,
  at: Date,
): Promise<CheckPoint | null> {
  const r = await db.query<{
    product_id: string;
    competitor_id: string | null;
    product_name: string;
    competitor_name: string | null;
  }>(
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
  const r = await db.query<{ waiting: boolean }>(
    `/* hasAlertBacklog */ select exists (select 1 from alert_backlog where account_id = $1) as waiting`,
    [accountId],
  );
  return r.rows[0]!.waiting;
}

/** Queues a batch for evaluation after commit (migrations/0007: the insert wakes the evaluators). */
export async function queueBacklog(db: Queryable, accountId: string, observationIds: readonly number[]): Promise<void> {
  await db.query(
    `/* queueAlertBacklog */ insert into alert_backlog (account_id, observation_ids) values ($1, $2::bigint[])`,
    [accountId, observationIds],
  );
}

export interface QueuedBatch {
  id: number;
  account_id: string;
  observation_ids: number[];
}

/**
 * Takes the oldest queued batch whose account has no older one (an older one still present is
 * being evaluated: an account's batches go in order) and that no live lease holds, for
 * `leaseMs` under the name `worker`; null when there is none. One short statement: the batch is
 * read and evaluated after it (backlog.ts), and another worker takes it over once the lease
 * ends without the batch deleted.
 */
export async function leaseBacklog(db: Queryable, worker: string, leaseMs: number): Promise<QueuedBatch | null> {
  const r = await db.query<{ id: number | string; account_id: string; observation_ids: (number | string)[] }>(
    `/* leaseAlertBacklog */
     update alert_backlog b set locked_by = $1, locked_until = now() + make_interval(secs => $2::float8 / 1000)
      where b.id = (select x.id from alert_backlog x
                     where (x.locked_until is null or x.locked_until < now() or x.locked_by = $1)
                       and not exists (select 1 from alert_backlog o where o.account_id = x.account_id and o.id < x.id)
                     order by x.id
                     limit 1
                       for update skip locked)
     returning b.id, b.account_id, b.observation_ids`,
    [worker, leaseMs],
  );
  const x = r.rows[0];
  return x ? { id: Number(x.id), account_id: x.account_id, observation_ids: x.observation_ids.map(Number) } : null;
}

/** Whether `worker` still holds batch `id`, locking it to the end of the transaction (which deletes it). */
export async function holdsBacklog(db: Queryable, id: number, worker: string): Promise<boolean> {
  const r = await db.query(
    `/* holdsAlertBacklog */ select 1 from alert_backlog where id = $1 and locked_by = $2 for update`,
    [id, worker],
  );
  return r.rows.length > 0;
}

export async function deleteBacklog(db: Queryable, id: number): Promise<void> {
  await db.query(`/* deleteAlertBacklog */ delete from alert_backlog where id = $1`, [id]);
}

/** A rule's scope as the statements below filter it. */
export interface ScopeFilter {
  product_id: string | null;
  competitor_id: string | null;
  listing_id: string | null;
}

/**
 * The latest observation of each price series in `scope` (price_series keeps it), for a rule
 * that starts (docs/alerts/firing.md, "What already holds"). `own`: true our own series only,
 * false competitors' only, null both. A listing narrows to the series whose latest observation
 * it recorded, as a point's `listing_id` is judged.
 */
export async function loadLatestObservationIds(
  db: Queryable,
  accountId: string,
  scope: ScopeFilter,
  own: boolean | null,
): Promise<number[]> {
  const r = await db.query<{ id: number | string }>(
    `/* loadLatestObservationIds */
     select s.latest_observation_id as id
       from price_series s
      where s.account_id = $1 and s.latest_observation_id is not null
        and ($2::text is null or s.product_id = $2)
        and ($3::text is null or s.competitor_id = $3)
        and ($4::text is null or s.latest_listing_id = $4)
        and ($5::boolean is null or (s.competitor_id is null) = $5)`,
    [accountId, scope.product_id, scope.competitor_id, scope.listing_id, own],
  );
  return r.rows.map((x) => Number(x.id));
}

/** The listings in `scope` whose checks failed at least `failures` times in a row, as check points at their last check. */
export async function loadFailingListings(
  db: Queryable,
  accountId: string,
  scope: ScopeFilter,
  failures: number,
): Promise<CheckPoint[]> {
  const r = await db.query<{
    listing_id: string;
    product_id: string;
    competitor_id: string | null;
    product_name: string;
    competitor_name: string | null;
    failures: number | string;
    observed_at: Date;
  }>(
    `/* loadFailingListings */
     select l.id as listing_id, l.product_id, l.competitor_id, p.name as product_name, c.name as competitor_name,
            l.consecutive_failures as failures, l.last_checked_at as observed_at
       from listings l join products p on p.id = l.product_id left join competitors c on c.id = l.competitor_id
      where l.account_id = $1 and l.consecutive_failures >= $5 and l.last_checked_at is not null
        and ($2::text is null or l.product_id = $2)
        and ($3::text is null or l.competitor_id = $3)
        and ($4::text is null or l.id = $4)
      order by l.last_checked_at, l.id`,
    [accountId, scope.product_id, scope.competitor_id, scope.listing_id, failures],
  );
  return r.rows.map((x) => ({ kind: 'check', ...x, failures: Number(x.failures) }));
}
