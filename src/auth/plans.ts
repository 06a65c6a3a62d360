/** The plans and the requests per UTC hour each allows: the one place these numbers are stated. */
export const PLANS = { free: 1_000, starter: 10_000, business: 100_000 } as const;
export type Plan = keyof typeof PLANS;
export const PLAN_NAMES = Object.keys(PLANS) as Plan[];
export const isPlan = (p: unknown): p is Plan => typeof p === 'string' && Object.hasOwn(PLANS, p);

/** "free 1000, starter 10000, business 100000": each plan with its hourly limit, for help and documentation texts. */
export function describePlans(): string {
  return PLAN_NAMES.map((p) => `${p} ${PLANS[p]}`).join(', ');
}
