import type { Queryable } from '../../db/types.js';
import { loadExchangeRates } from '../../money/convert.js';
import { type Firing, recordFirings } from '../fired.js';
import { subjectOf } from './conditions.js';
import { freshState, sameState, stateKey } from './machine.js';
import type { ObservationPoint, Point } from './point.js';
import type { EngineRule } from './rule.js';
import { type Fired, rulesByProduct, runRules } from './run.js';
import { hasBacklog, loadBatchLows, loadCheckPoint, loadEnabledRules, loadNewPoints, loadPositions, loadStates, queueBacklog, saveStates } from './sql.js';

/**
 * Live evaluation (docs/alerts/firing.md): the account's enabled rules over new points, in the
 * transaction that recorded them, so an alert exists exactly when its observation (or failed
 * check) does. A fixed number of statements for any batch: the rules (the only one when the
 * account has none), the points, the rates, the states, the position and the lows when a rule
 * needs them, the states written, the firings written.
 */

const toFiring = (f: Fired): Firing => ({
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

async function evaluate(tx: Queryable, accountId: string, rules: EngineRule[], points: Point[]): Promise<void> {
  if (points.length === 0) return;
  const rates = await loadExchangeRates(tx, accountId);
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
  await saveStates(tx, changed.map(([, m]) => ({ alert_id: m.rule.id!, subject: m.subject, state: m.state })));
  await recordFirings(tx, accountId, fired.map(toFiring));
}

/** The largest POST /prices batch: an ALERT_INLINE_MAX this high never defers. */
const MAX_BATCH = 1000;

/**
 * After observations `observationIds` were inserted (src/prices/observed.ts): evaluated now, in
 * their transaction; or, when the batch has more than `inlineMax` observations (ALERT_INLINE_MAX,
 * by default never) or the account already has a batch waiting, queued in alert_backlog and
 * evaluated by a worker just after the commit (backlog.ts; docs/alerts/firing.md, "Large
 * batches"), so an account's batches are evaluated in the order they were recorded.
 */
export async function evaluateObservations(tx: Queryable, accountId: string, observationIds: readonly number[], inlineMax = Infinity): Promise<void> {
  if (observationIds.length === 0) return;
  const rules = await loadEnabledRules(tx, accountId);
  if (rules.length === 0) return;
  // With deferral off (no batch is larger than the default 1000) nothing queues: no backlog to ask about.
  if (observationIds.length > inlineMax || (inlineMax < MAX_BATCH && (await hasBacklog(tx, accountId)))) {
    await queueBacklog(tx, accountId, observationIds);
    return;
  }
  await evaluatePoints(tx, accountId, rules, await loadNewPoints(tx, accountId, observationIds));
}

/** A queued batch (backlog.ts), judged against what was recorded by `recordedAt`, with the rules enabled now. */
export async function evaluateQueued(tx: Queryable, accountId: string, observationIds: readonly number[], recordedAt: Date): Promise<void> {
  const rules = await loadEnabledRules(tx, accountId);
  if (rules.length === 0) return;
  await evaluatePoints(tx, accountId, rules, await loadNewPoints(tx, accountId, observationIds, recordedAt));
}

async function evaluatePoints(tx: Queryable, accountId: string, rules: EngineRule[], points: ObservationPoint[]): Promise<void> {
  const types = new Set(rules.map((r) => r.condition_type));
  if (types.has('undercut') || types.has('not_cheapest')) {
    const positions = await loadPositions(tx, accountId, [...new Set(points.map((p) => p.product_id))]);
    for (const p of points) Object.assign(p, positions.get(p.product_id) ?? { own_price: null, rank: null });
  }
  const days = [...new Set(rules.filter((r) => r.condition_type === 'lowest_in_days').map((r) => r.condition.days ?? 1))];
  if (days.length > 0) {
    const lows = await loadBatchLows(tx, accountId, points.map((p) => p.observation_id), days);
    for (const p of points) p.lows = lows.get(p.observation_id);
  }
  await evaluate(tx, accountId, rules, points);
}

/** After a failed check of a listing (src/checks/recorded.ts): `failures` in a row, this one included. */
export async function evaluateCheckFailure(tx: Queryable, accountId: string, listingId: string, failures: number, at: Date): Promise<void> {
  const rules = (await loadEnabledRules(tx, accountId)).filter((r) => r.condition_type === 'listing_failing');
  if (rules.length === 0) return;
  const point = await loadCheckPoint(tx, accountId, listingId, failures, at);
  if (point) await evaluate(tx, accountId, rules, [point]);
}
