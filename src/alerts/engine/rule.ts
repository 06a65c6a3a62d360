/**
 * A rule as the engine reads it from the alerts table (or a preview's body with its defaults):
 * only what evaluation needs. `condition` is the stored condition object (src/alerts/schemas.ts
 * says what each type holds).
 */
export interface EngineRule {
  id: string | null;
  product_id: string | null;
  competitor_id: string | null;
  listing_id: string | null;
  condition_type: string;
  condition: EngineCondition;
  rearm: 'on_clear' | 'cooldown' | 'every_change';
  /** Decimal text. */
  hysteresis_percent: string;
  cooldown_seconds: number;
  confirmations: number;
  daily_cap: number | null;
}

export interface EngineCondition {
  type: string;
  threshold?: number;
  currency?: string;
  percent?: number;
  amount?: number;
  margin_percent?: number;
  margin_amount?: number;
  days?: number;
  failures?: number;
  series?: 'competitors' | 'own';
}

export const FAILURES_DEFAULT = 3;

/** Which series a series condition watches: undercut always a competitor's; the rest as `series` says (default competitors). */
export function watchesOwn(rule: EngineRule): boolean {
  return rule.condition_type !== 'undercut' && rule.condition.series === 'own';
}
