import { minorDigits } from '../../money/currency.js';
import type { ObservationPoint, Point } from './point.js';
import { type EngineRule, FAILURES_DEFAULT } from './rule.js';

/**
 * The one sentence an alert event says to a person. Amounts carry their currency's decimals
 * ("44.00 EUR", "1802 JPY"; more only when the price has them: "0.4999 EUR"), and a
 * competitor's name is written as the account wrote it (never re-cased).
 */

export function amount(price: string | number, currency: string): string {
  const n = Number(price);
  const digits = minorDigits(currency) ?? 2;
  const fixed = n.toFixed(digits);
  // Keep decimals beyond the currency's when the price has them (prices hold up to four).
  const exact = n.toFixed(4).replace(/0+$/, '').replace(/\.$/, '');
  return `${exact.length > fixed.length ? exact : fixed} ${currency}`;
}
const at = (p: ObservationPoint) =>
  p.competitor_id === null ? 'in our shop' : `at ${p.competitor_name ?? 'a competitor'}`;
const whose = (p: ObservationPoint) =>
  p.competitor_id === null ? 'Our price' : `${p.competitor_name ?? 'A competitor'}'s price`;

function percentMoved(p: ObservationPoint): string {
  const prev = Number(p.previous!.price);
  if (prev === 0) return '';
  const pct = Math.round(((Number(p.price) - prev) / prev) * 10000) / 100;
  return ` (${pct > 0 ? '+' : ''}${pct}%)`;
}

function ofObservation(rule: EngineRule, p: ObservationPoint): string {
  const c = rule.condition;
  const now = amount(p.price, p.currency);
  const product = p.product_name;
  switch (rule.condition_type) {
    case 'price_below':
    case 'price_above': {
      const side = rule.condition_type === 'price_below' ? 'below' : 'above';
      return `${whose(p)} of ${product} is ${now}, ${side} the threshold of ${amount(c.threshold ?? 0, c.currency ?? p.product_currency)}.`;
    }
    case 'price_drop':
    case 'price_rise':
      return `${whose(p)} of ${product} ${rule.condition_type === 'price_drop' ? 'fell' : 'rose'} from ${amount(p.previous!.price, p.previous!.currency)} to ${now}${percentMoved(p)}.`;
    case 'undercut':
      return `${p.competitor_name ?? 'A competitor'} sells ${product} at ${now}, under our price of ${amount(p.own_price ?? 0, p.product_currency)}${
        c.margin_percent
          ? ` by more than ${c.margin_percent}%`
          : c.margin_amount
            ? ` by more than ${amount(c.margin_amount, p.product_currency)}`
            : ''
      }.`;
    case 'not_cheapest':
      return `${product} is no longer cheapest with us: our price now ranks ${p.rank ?? '?'} after ${p.competitor_id === null ? 'our price' : `${p.competitor_name ?? 'a competitor'}'s price`} of ${now}.`;
    case 'lowest_in_days':
      return `${whose(p)} of ${product}, ${now}, is its lowest in ${c.days ?? 1} day${c.days === 1 ? '' : 's'}.`;
    case 'back_in_stock':
      return `${product} is in stock ${at(p)} at ${now}.`;
    case 'out_of_stock':
      return `${product} is out of stock ${at(p)}.`;
    default:
      return `${rule.condition_type} fired for ${product} ${at(p)}.`;
  }
}

export function messageOf(rule: EngineRule, p: Point): string {
  if (p.kind === 'observation') return ofObservation(rule, p);
  const where = p.competitor_id === null ? 'our own page' : `the page at ${p.competitor_name ?? 'a competitor'}`;
  const failures = rule.condition.failures ?? FAILURES_DEFAULT;
  return `The checks of ${p.product_name} on ${where} failed ${p.failures} time${p.failures === 1 ? '' : 's'} in a row (the rule fires at ${failures}).`;
}
