import type { EngineRule } from './rule.js';

/**
 * The firing state machine (docs/alerts/firing.md): a pure function from what a rule remembers
 * about one subject and one judged observation to the new memory and whether the rule fires.
 * Live evaluation and preview both run every observation through `step`, so they agree by
 * construction.
 */

export interface RuleState {
  /** Observations in a row on which the condition held. */
  streak: number;
  /** on_clear: whether the rule may fire (false from a firing until the condition clears). */
  armed: boolean;
  /** observed_at (ms) of the observation that last fired the rule. */
  last_fired_at: number | null;
  /** The UTC day (YYYY-MM-DD) `cap_count` counts firings of. */
  cap_day: string | null;
  cap_count: number;
  /** What a condition needs to remember between observations (not_cheapest: the last rank). */
  last_value: string | null;
}

/** A state's key: the rule's id and the subject. */
export const stateKey = (alertId: string | null, subject: string) => `${alertId ?? ''}\u0000${subject}`;

export const freshState = (): RuleState => ({
  streak: 0,
  armed: true,
  last_fired_at: null,
  cap_day: null,
  cap_count: 0,
  last_value: null,
});

/** Whether two states remember the same. */
export const sameState = (a: RuleState, b: RuleState) =>
  a.streak === b.streak &&
  a.armed === b.armed &&
  a.last_fired_at === b.last_fired_at &&
  a.cap_day === b.cap_day &&
  a.cap_count === b.cap_count &&
  a.last_value === b.last_value;

/** What a condition says of one observation. */
export type Verdict =
  /** It cannot be judged (no exchange rate, no previous price, unknown stock): nothing moves. */
  | { kind: 'skip' }
  /** First sight of a value the condition compares with the next (not_cheapest's rank): remembered, never fires. */
  | { kind: 'seed'; armed: boolean; value: string }
  /** holds: the condition is true; clear: it is false past the hysteresis band (re-arms on_clear). */
  | { kind: 'judged'; holds: boolean; clear: boolean; value?: string };

export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function step(
  rule: EngineRule,
  state: RuleState,
  verdict: Verdict,
  atMs: number,
): { state: RuleState; fires: boolean } {
  if (verdict.kind === 'skip') return { state, fires: false };
  if (verdict.kind === 'seed')
    return { state: { ...state, streak: 0, armed: verdict.armed, last_value: verdict.value }, fires: false };
  if (
    !verdict.holds &&
    state.streak === 0 &&
    (state.armed || !verdict.clear) &&
    (verdict.value === undefined || verdict.value === state.last_value)
  ) {
    // The usual case: the condition does not hold and nothing is remembered to change.
    return { state, fires: false };
  }
  const next: RuleState = { ...state, last_value: verdict.value ?? state.last_value };
  if (!verdict.holds) {
    next.streak = 0;
    if (verdict.clear) next.armed = true;
    return { state: next, fires: false };
  }
  next.streak = state.streak + 1;
  if (next.streak < rule.confirmations) return { state: next, fires: false };
  const may =
    rule.rearm === 'every_change' ||
    (rule.rearm === 'on_clear' && state.armed) ||
    (rule.rearm === 'cooldown' &&
      (state.last_fired_at === null || atMs - state.last_fired_at >= rule.cooldown_seconds * 1000));
  if (!may) return { state: next, fires: false };
  const day = utcDay(atMs);
  const count = state.cap_day === day ? state.cap_count : 0;
  // Over the cap the firing is dropped; on_clear stays armed, so the next day may fire.
  if (rule.daily_cap !== null && count >= rule.daily_cap)
    return { state: { ...next, cap_day: day, cap_count: count }, fires: false };
  return { state: { ...next, armed: false, last_fired_at: atMs, cap_day: day, cap_count: count + 1 }, fires: true };
}
