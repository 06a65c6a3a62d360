import type { Queryable } from '../../db/types.js';
import { type ExchangeRates, loadExchangeRates } from '../../money/convert.js';
import { type Firing, recordFirings } from '../fired.js';
import { subjectOf } from './conditions.js';
import { freshState, sameState, stateKey } from './machine.js';
import type { ObservationPoint, Point } from './point.js';
import type { EngineRule } from './rule.js';
import { type Fired, rulesByProduct, runRules } from './run.js';
import { seriesLows } from './lows.js';
import {
  hasBacklog,
  type LowSeries,
  loadCheckPoint,
  loadEnabledRules,
  loadLowInputs,
  loadNewPoints,
  loadPositions,
  loadStates,
  lockStates,
  queueBacklog,
  saveStates,
  windowsOf,
} from './sql.js';

/**
 * Live evaluation (docs/alerts/firing.md): the account's enabled rules over new points, in the
 * transaction that recorded them, so an alert exists exactly when its observation (or failed
 * check) does. A fixed number of statements for any batch: the rules (the only one when the
 * account has none), the points, the rates, the states, the position and the lows when a rule
 * needs them, the states written, the firings written.
 */

export const toFiring = (f: Fired): Firing => ({
  alert_id: f.rule.id!,
  condition_type: f.condition_type,
  product_id: f.product_id,
  competitor_id: f.competitor_id,
  listing_id: f.listing_id,
  previous: f.previous,
  current: f.current,
  message: f.message,
  test: false,
  sequence: f.sequence,
});

async function evaluate(
  tx: Queryable,
  accountId: string,
  rules: EngineRule[],
  points: Point[],
  rates: ExchangeRates,
): Promise<void> {
  if (points.length === 0) return;
  const keys = new Map<string, { alert_id: string; subject: string }>();
  const rulesOf = rulesByProduct(rules);
  // A rule's subject depends only on what names the point's series: each series is asked once.
  const asked = new Set<string>();
  for (const p of points) {
    const series = `${p.kind}\u0000${p.product_id}\u0000${p.competitor_id}\u0000${p.listing_id}\u0000${p.kind === 'observation' ? p.source : ''}`;
    if (asked.has(series)) continue;
    asked.add(series);
    for (const rule of rulesOf(p.product_id)) {
      const subject = subjectOf(rule, p);
      if (subject !== null) keys.set(stateKey(rule.id, subject), { alert_id: rule.id!, subject });
    }
  }
  if (keys.size === 0) return;
  const states = await loadStates(tx, [...keys.values()]);
  const stored = new Map(states);
  const { fired, moved } = runRules(rules, points, states, rates);
  // Only what differs from what is stored is written (a missing row reads as fresh): most rules
  // judge most points without changing what they remember.
  const changed = [...moved].filter(([key, m]) => !sameState(stored.get(key) ?? freshState(), m.state));
  await saveStates(
    tx,
    changed.map(([, m]) => ({ alert_id: m.rule.id!, subject: m.subject, state: m.state })),
  );
  await recordFirings(tx, accountId, fired.map(toFiring));
}

/** The largest POST /prices batch: an ALERT_INLINE_MAX this high never defers. */
const MAX_BATCH = 1000;

/**
 * After observations `observationIds` were inserted (src/prices/observed.ts): evaluated now, in
 * their transaction; or, when the batch has more than `inlineMax` observations (ALERT_INLINE_MAX)
 * or the account already has a batch waiting, queued in alert_backlog and evaluated by a worker
 * just after the commit (backlog.ts; docs/alerts/firing.md, "Large batches"), so an account's
 * batches are evaluated in the order they were recorded.
 */
export async function evaluateObservations(
  tx: Queryable,
  accountId: string,
  observationIds: readonly number[],
  inlineMax = Infinity,
): Promise<void> {
  if (observationIds.length === 0) return;
  const rules = await loadEnabledRules(tx, accountId);
  if (rules.length === 0) return;
  // With deferral off (no batch is larger than 1000) nothing queues: no backlog to ask about.
  if (observationIds.length > inlineMax || (inlineMax < MAX_BATCH && (await hasBacklog(tx, accountId)))) {
    await queueBacklog(tx, accountId, observationIds);
    return;
  }
  await applyRules(tx, accountId, rules, await readPoints(tx, accountId, rules, observationIds));
}

/** Observations a statement reads at once (a slice of a large batch). */
const SLICE = 250;

/**
 * What the rules need of observations `ids`, as points in time order: each with its previous
 * observation, "late" flag and change sequence (read in slices of the batch, by id: each slice
 * sees the one before it as the batch's own earlier observations, as the whole batch would),
 * and its lows when a rule needs them. Reads only, so a queued batch is read before its write
 * transaction (backlog.ts).
 */
export async function readPoints(
  db: Queryable,
  accountId: string,
  rules: readonly EngineRule[],
  ids: readonly number[],
): Promise<ObservationPoint[]> {
  const sorted = [...ids].sort((a, b) => a - b);
  const windows = windowsOf(
    rules.filter((r) => r.condition_type === 'lowest_in_days').map((r) => r.condition.days ?? 1),
  );
  const rates = windows.length > 0 ? await loadExchangeRates(db, accountId) : null;
  const points: ObservationPoint[] = [];
  for (let i = 0; i < sorted.length; i += SLICE)
    points.push(...(await loadNewPoints(db, accountId, sorted.slice(i, i + SLICE))));
  if (sorted.length > SLICE)
    points.sort((a, b) => a.observed_at.getTime() - b.observed_at.getTime() || a.observation_id - b.observation_id);
  // The lows of the whole batch at once: the part of the windows its observations share is read
  // once per series, however many slices the points took.
  if (rates) await attachLows(db, accountId, points, windows, rates);
  return points;
}

/**
 * The rules over points read by readPoints, in the transaction that records what they decide:
 * the states they move and the alerts they fire. Our price and ranks are read here, as of now.
 */
export async function applyRules(
  tx: Queryable,
  accountId: string,
  rules: EngineRule[],
  points: ObservationPoint[],
): Promise<void> {
  const products = [...new Set(points.map((p) => p.product_id))];
  // A product's rank moves with any of its series: its not_cheapest states are taken in turn
  // (lockStates) before the rank is read, so the rank each transaction judges includes what
  // the one before it committed, and a transition fires once.
  const rankRules = rules.filter((r) => r.condition_type === 'not_cheapest').map((r) => r.id!);
  if (rankRules.length > 0)
    await lockStates(
      tx,
      rankRules,
      products.map((id) => `p:${id}`),
    );
  await attachPositions(tx, accountId, rules, points);
  await evaluate(tx, accountId, rules, points, await loadExchangeRates(tx, accountId));
}

/** Our price and each product's rank, as of now, on the points, when a rule compares with them (undercut, not_cheapest). */
export async function attachPositions(
  db: Queryable,
  accountId: string,
  rules: readonly EngineRule[],
  points: ObservationPoint[],
): Promise<void> {
  if (!rules.some((r) => r.condition_type === 'undercut' || r.condition_type === 'not_cheapest')) return;
  const positions = await loadPositions(db, accountId, [...new Set(points.map((p) => p.product_id))]);
  for (const p of points) Object.assign(p, positions.get(p.product_id) ?? { own_price: null, rank: null });
}

/** The lows of a batch's points that are not late (src/alerts/engine/lows.ts), series by series. */
async function attachLows(
  db: Queryable,
  accountId: string,
  points: ObservationPoint[],
  windows: number[],
  rates: ExchangeRates,
): Promise<void> {
  const bySeries = new Map<string, ObservationPoint[]>();
  for (const p of points) {
    if (p.late) continue;
    const key = `${p.product_id}\u0000${p.competitor_id ?? ''}`;
    const list = bySeries.get(key);
    if (list) list.push(p);
    else bySeries.set(key, [p]);
  }
  const groups = [...bySeries.values()];
  const series = groups.map((ps): LowSeries => ({
    product_id: ps[0]!.product_id,
    competitor_id: ps[0]!.competitor_id,
    t1: new Date(Math.min(...ps.map((p) => p.observed_at.getTime()))),
    tk: new Date(Math.max(...ps.map((p) => p.observed_at.getTime()))),
    first_id: ps.reduce((m, p) => Math.min(m, p.observation_id), Infinity),
    currencies: [...new Set(ps.map((p) => p.currency))],
  }));
  const inputs = await loadLowInputs(db, accountId, series, windows, null);
  for (const [n, ps] of groups.entries()) {
    const { rows, shared } = inputs[n]!;
    const lows = await seriesLows(
      rows,
      ps.map((p) => ({ id: p.observation_id, at: p.observed_at.getTime(), currency: p.currency })),
      windows,
      rates,
      shared,
    );
    for (const p of ps) p.lows = lows.get(p.observation_id);
  }
}

/** After a failed check of a listing (src/checks/recorded.ts): `failures` in a row, this one included. */
export async function evaluateCheckFailure(
  tx: Queryable,
  accountId: string,
  listingId: string,
  failures: number,
  at: Date,
): Promise<void> {
  const rules = (await loadEnabledRules(tx, accountId)).filter((r) => r.condition_type === 'listing_failing');
  if (rules.length === 0) return;
  const point = await loadCheckPoint(tx, accountId, listingId, failures, at);
  if (point) await evaluate(tx, accountId, rules, [point], await loadExchangeRates(tx, accountId));
}
