/** The condition types of an alert rule (design/API.md "Alerts"): the rule schemas and the alert event both name them. */
export const CONDITION_TYPES = [
  'price_below',
  'price_above',
  'price_drop',
  'price_rise',
  'undercut',
  'not_cheapest',
  'lowest_in_days',
  'back_in_stock',
  'out_of_stock',
  'listing_failing',
] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];
