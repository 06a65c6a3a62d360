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

/** Conditions about one price series (the rest: a product's rank, a listing's checks). */
export const SERIES_CONDITIONS: ReadonlySet<string> = new Set<ConditionType>([
  'price_below',
  'price_above',
  'price_drop',
  'price_rise',
  'undercut',
  'lowest_in_days',
  'back_in_stock',
  'out_of_stock',
]);

/** The series conditions whose `series` chooses competitors' prices or the own (undercut always watches competitors'). */
export const SERIES_CHOICE_CONDITIONS: readonly ConditionType[] = CONDITION_TYPES.filter(
  (t) => SERIES_CONDITIONS.has(t) && t !== 'undercut',
);
