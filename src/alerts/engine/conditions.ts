import type { ExchangeRates } from '../../money/convert.js';
import { cmp, factor, mul, percentOf, type Ratio, ratio, sub } from './exact.js';
import type { RuleState, Verdict } from './machine.js';
import type { ObservationPoint, Point } from './point.js';
import { SERIES_CONDITIONS } from '../condition-types.js';
import { type EngineRule, FAILURES_DEFAULT, watchesOwn } from './rule.js';

/**
 * Each condition type (design/API.md "Alerts") as a judgement of one point: which points a rule
 * watches, the subject its memory is kept for, and whether the condition holds or has cleared
 * past the hysteresis band. Pure: everything compared arrives in the point.
 */

const SKIP: Verdict = { kind: 'skip' };

/** The subject a rule remembers a point under, or null when the rule does not watch it. */
export function subjectOf(rule: EngineRule, p: Point): string | null {
  if (rule.product_id !== null && p.product_id !== rule.product_id) return null;
  if (rule.competitor_id !== null && p.competitor_id !== rule.competitor_id) return null;
  if (rule.listing_id !== null && p.listing_id !== rule.listing_id) return null;
  const type = rule.condition_type;
  if (type === 'listing_failing') {
    // A listing's successful check (an observation it recorded) ends its failures in a row.
    if (p.kind === 'check' || (p.source === 'scrape' && p.listing_id !== null)) return `l:${p.listing_id}`;
    return null;
  }
  if (p.kind !== 'observation') return null;
  if (type === 'not_cheapest') return `p:${p.product_id}`;
  if (!SERIES_CONDITIONS.has(type)) return null;
  if (watchesOwn(rule) !== (p.competitor_id === null)) return null;
  return `s:${p.product_id}:${p.competitor_id ?? 'own'}`;
}

/** value < limit holds; cleared when value is past limit moved by the band (up for "below", down for "above"). */
function below(value: Ratio, limit: Ratio, hysteresis: string): Verdict {
  return { kind: 'judged', holds: cmp(value, limit) < 0, clear: cmp(value, mul(limit, factor(hysteresis, 1))) >= 0 };
}
function above(value: Ratio, limit: Ratio, hysteresis: string): Verdict {
  return { kind: 'judged', holds: cmp(value, limit) > 0, clear: cmp(value, mul(limit, factor(hysteresis, -1))) <= 0 };
}

/** A change of at least `percent` of the previous price and/or `amount`; cleared when it falls short of either, relaxed by the band. */
function changed(rule: EngineRule, p: ObservationPoint, direction: 1 | -1): Verdict {
  if (p.previous === null || p.previous.currency !== p.currency) return SKIP;
  const prev = ratio(p.previous.price);
  const now = ratio(p.price);
  const moved = direction === 1 ? sub(now, prev) : sub(prev, now);
  const reaches = (relax: Ratio) => {
    const { percent, amount } = rule.condition;
    if (cmp(moved, { n: 0n, d: 1n }) <= 0) return false;
    if (percent !== undefined && cmp(moved, mul(percentOf(percent, prev), relax)) < 0) return false;
    if (amount !== undefined && cmp(moved, mul(ratio(amount), relax)) < 0) return false;
    return true;
  };
  return { kind: 'judged', holds: reaches({ n: 1n, d: 1n }), clear: !reaches(factor(rule.hysteresis_percent, -1)) };
}

function judgeObservation(rule: EngineRule, p: ObservationPoint, state: RuleState, rates: ExchangeRates): Verdict {
  const c = rule.condition;
  const h = rule.hysteresis_percent;
  switch (rule.condition_type) {
    case 'price_below':
    case 'price_above': {
      const limit = rates.convert(c.threshold ?? 0, c.currency ?? p.product_currency, p.currency);
      if (limit === null) return SKIP;
      return rule.condition_type === 'price_below'
        ? below(ratio(p.price), ratio(limit), h)
        : above(ratio(p.price), ratio(limit), h);
    }
    case 'price_drop':
      return changed(rule, p, -1);
    case 'price_rise':
      return changed(rule, p, 1);
    case 'undercut': {
      if (p.own_price == null) return SKIP;
      const price = rates.convert(p.price, p.currency, p.product_currency);
      if (price === null) return SKIP;
      const own = ratio(p.own_price);
      const limit =
        c.margin_percent !== undefined
          ? sub(own, percentOf(c.margin_percent, own))
          : sub(own, ratio(c.margin_amount ?? 0));
      return below(ratio(price), limit, h);
    }
    case 'lowest_in_days': {
      const low = p.lows?.get(c.days ?? 1);
      if (low == null) return SKIP;
      return below(ratio(p.price), ratio(low), h);
    }
    case 'back_in_stock':
      return p.in_stock === null ? SKIP : { kind: 'judged', holds: p.in_stock, clear: !p.in_stock };
    case 'out_of_stock':
      return p.in_stock === null ? SKIP : { kind: 'judged', holds: !p.in_stock, clear: p.in_stock };
    case 'not_cheapest': {
      if (p.rank == null) return SKIP;
      const value = String(p.rank);
      // "Goes from 1 to more than 1": a first rank is only remembered; the rule is armed when it is 1.
      if (state.last_value === null) return { kind: 'seed', armed: p.rank === 1, value };
      return { kind: 'judged', holds: p.rank > 1, clear: p.rank === 1, value };
    }
    case 'listing_failing':
      return { kind: 'judged', holds: false, clear: true };
    default:
      return SKIP;
  }
}

export function judge(rule: EngineRule, p: Point, state: RuleState, rates: ExchangeRates): Verdict {
  if (p.kind === 'check') {
    const failures = rule.condition.failures ?? FAILURES_DEFAULT;
    return { kind: 'judged', holds: p.failures >= failures, clear: p.failures === 0 };
  }
  return judgeObservation(rule, p, state, rates);
}
