import type { ExchangeRates } from '../../money/convert.js';
import type { ObservedPrice } from '../alert-event.js';
import { judge, subjectOf } from './conditions.js';
import { freshState, type RuleState, stateKey, step } from './machine.js';
import { messageOf } from './message.js';
import type { Point, PriceSide } from './point.js';
import type { EngineRule } from './rule.js';

/** What one rule fired on one point: an alert event without id and timestamps. */
export interface Fired {
  rule: EngineRule;
  at: Date;
  condition_type: string;
  product_id: string;
  competitor_id: string | null;
  listing_id: string | null;
  previous: ObservedPrice | null;
  current: ObservedPrice | null;
  message: string;
  sequence: number | null;
  /** The observation that fired it (null: a failed check). */
  observation_id: number | null;
}

const side = (s: PriceSide | null): ObservedPrice | null =>
  s === null
    ? null
    : { price: Number(s.price), currency: s.currency, in_stock: s.in_stock, observed_at: s.observed_at.toISOString() };

/** The rules that may watch a product's points, in their order: rules scoped to another product never do. */
export function rulesByProduct(rules: readonly EngineRule[]): (productId: string) => readonly EngineRule[] {
  const ofProduct = new Map<string, readonly EngineRule[]>();
  return (productId) => {
    let found = ofProduct.get(productId);
    if (found === undefined)
      ofProduct.set(productId, (found = rules.filter((r) => r.product_id === null || r.product_id === productId)));
    return found;
  };
}

/**
 * Runs every rule over points in time order, from the states given (missing: fresh), through
 * the pure machine. Returns the firings in order and each state that moved. Late points are
 * passed over. A product's rank is that of the whole batch, so not_cheapest judges only the
 * last point of each product.
 */
export function runRules(
  rules: readonly EngineRule[],
  points: readonly Point[],
  states: Map<string, RuleState>,
  rates: ExchangeRates,
): { fired: Fired[]; moved: Map<string, { rule: EngineRule; subject: string; state: RuleState }> } {
  const fired: Fired[] = [];
  const moved = new Map<string, { rule: EngineRule; subject: string; state: RuleState }>();
  const lastOfProduct = new Map<string, number>();
  points.forEach((p, i) => lastOfProduct.set(p.product_id, i));
  const rulesOf = rulesByProduct(rules);
  points.forEach((p, i) => {
    if (p.kind === 'observation' && p.late) return;
    for (const rule of rulesOf(p.product_id)) {
      if (rule.condition_type === 'not_cheapest' && lastOfProduct.get(p.product_id) !== i) continue;
      const subject = subjectOf(rule, p);
      if (subject === null) continue;
      const key = stateKey(rule.id, subject);
      const before = states.get(key) ?? freshState();
      const r = step(rule, before, judge(rule, p, before, rates), p.observed_at.getTime());
      if (r.state !== before) {
        states.set(key, r.state);
        moved.set(key, { rule, subject, state: r.state });
      }
      if (r.fires) fired.push(firedOf(rule, p));
    }
  });
  return { fired, moved };
}

/** What `rule` fires on point `p`: its previous and current prices, the message, the change sequence. */
export function firedOf(rule: EngineRule, p: Point): Fired {
  const observed = p.kind === 'observation';
  return {
    rule,
    at: p.observed_at,
    condition_type: rule.condition_type,
    product_id: p.product_id,
    competitor_id: p.competitor_id,
    listing_id: p.listing_id,
    previous: observed ? side(p.previous) : null,
    current: observed ? side(p) : null,
    message: messageOf(rule, p),
    sequence: observed ? p.sequence : null,
    observation_id: observed ? p.observation_id : null,
  };
}
