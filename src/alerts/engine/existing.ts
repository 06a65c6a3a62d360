import type { Queryable } from '../../db/types.js';
import { loadExchangeRates } from '../../money/convert.js';
import { SERIES_CONDITIONS } from '../condition-types.js';
import { judge, subjectOf } from './conditions.js';
import { attachPositions, readPoints } from './live.js';
import { freshState, type RuleState, step } from './machine.js';
import type { Point } from './point.js';
import { type EngineRule, FAILURES_DEFAULT, watchesOwn } from './rule.js';
import { type Fired, firedOf } from './run.js';
import { loadFailingListings, loadLatestObservationIds } from './sql.js';

/**
 * What already holds when a rule starts (docs/alerts/firing.md, "What already holds"): each
 * subject in the rule's scope judged on its latest point (a series' latest observation with the
 * observation before it and its lows, as live evaluation judged it when it arrived; a product's
 * rank now; a listing's failures in a row now) by the engine's own conditions and machine.
 */

export interface Existing {
  subject: string;
  point: Point;
  /** What the rule remembers of the subject once it has taken the point in: as if it had fired on it. */
  state: RuleState;
  /** The firing, should the person want it now. */
  fired: Fired;
}

/**
 * The state a starting rule judges what already holds from: a condition that holds on the
 * latest point counts as confirmed (the person sees it and chooses), and `not_cheapest` takes
 * the product as having been cheapest, so "not cheapest now" is the transition it fires on.
 */
const startingState = (rule: EngineRule): RuleState => ({
  ...freshState(),
  streak: rule.confirmations - 1,
  last_value: rule.condition_type === 'not_cheapest' ? '1' : null,
});

/** The latest point of each subject in the rule's scope, oldest first (positions and lows attached). */
async function latestPoints(db: Queryable, accountId: string, rule: EngineRule): Promise<Point[]> {
  const type = rule.condition_type;
  if (type === 'listing_failing')
    return loadFailingListings(db, accountId, rule, rule.condition.failures ?? FAILURES_DEFAULT);
  const own = SERIES_CONDITIONS.has(type) ? watchesOwn(rule) : null;
  const ids = await loadLatestObservationIds(db, accountId, rule, own);
  if (ids.length === 0) return [];
  const points = await readPoints(db, accountId, [rule], ids);
  await attachPositions(db, accountId, [rule], points);
  return points;
}

/** The subjects in the rule's scope on which its condition holds now, in the order of their latest points. */
export async function judgeExisting(db: Queryable, accountId: string, rule: EngineRule): Promise<Existing[]> {
  const points = await latestPoints(db, accountId, rule);
  if (points.length === 0) return [];
  const rates = await loadExchangeRates(db, accountId);
  const found = new Map<string, Existing>();
  const before = startingState(rule);
  for (const p of points) {
    if (p.kind === 'observation' && p.late) continue;
    const subject = subjectOf(rule, p);
    if (subject === null) continue;
    // A product's series all give not_cheapest the same rank: its latest point is the one kept.
    found.delete(subject);
    const r = step(rule, before, judge(rule, p, before, rates), p.observed_at.getTime());
    if (r.fires) found.set(subject, { subject, point: p, state: r.state, fired: firedOf(rule, p) });
  }
  return [...found.values()];
}
