import type { Database, Queryable } from '../db/types.js';
import { PG_FOREIGN_KEY_VIOLATION } from '../db/types.js';
import { ERRORS, type ErrorDetail } from '../http/errors.js';
import { newId } from '../ids.js';
import { type AlertCreate, type AlertRule, type AlertUpdate, checkAlertRule, normalizeCondition, withDefaults } from './schemas.js';
import { type AlertRow, deleteAlert, deleteAlertStates, findScopeRefs, getAlert, insertAlert, updateAlert } from './sql.js';

/**
 * Alert rules (docs/ALERTS.md). Rule writes record no events: the only alert event type is
 * `alert.triggered` (design/API.md, "Events and webhooks").
 */

type Scope = Pick<AlertRule, 'product_id' | 'competitor_id' | 'listing_id'>;
const SCOPE_FIELDS = ['product_id', 'competitor_id', 'listing_id'] as const;

/**
 * Checks the scope ids against the account and completes a listing's scope: a rule on a listing
 * watches that listing's product and competitor, so those are filled in; a non-null one that
 * the body sent and that differs is refused. A scope id that is not in the account (never
 * existed or another account's) is a 422 naming the field, as for a listing's product_id.
 * Answers the listing's competitor (null: our own listing; undefined: no listing).
 */
export async function resolveScope(db: Queryable, accountId: string, rule: Scope, sent: Partial<Scope>): Promise<string | null | undefined> {
  if (rule.product_id === null && rule.competitor_id === null && rule.listing_id === null) return undefined;
  const refs = await findScopeRefs(db, accountId, rule);
  const details: ErrorDetail[] = [];
  if (rule.product_id !== null && !refs.product) details.push({ field: 'product_id', message: 'is not a product of this account' });
  if (rule.competitor_id !== null && !refs.competitor) details.push({ field: 'competitor_id', message: 'is not a competitor of this account' });
  if (rule.listing_id !== null && !refs.listing) details.push({ field: 'listing_id', message: 'is not a listing of this account' });
  if (details.length > 0) throw ERRORS.validation(details, 'The alert rule\'s scope is not in this account');
  const listing = refs.listing;
  if (!listing) return undefined;
  const own: Scope = { product_id: listing.product_id, competitor_id: listing.competitor_id, listing_id: rule.listing_id };
  for (const f of ['product_id', 'competitor_id'] as const) {
    const value = sent[f];
    if (value !== undefined && value !== null && value !== own[f]) {
      details.push({ field: f, message: `does not match listing ${rule.listing_id}, which belongs to ${own[f] ?? 'our own shop'}` });
    }
  }
  if (details.length > 0) throw ERRORS.validation(details, 'The alert rule\'s scope is not consistent');
  rule.product_id = own.product_id;
  rule.competitor_id = own.competitor_id;
  return listing.competitor_id;
}

const isForeignKeyViolation = (err: unknown) => (err as { code?: unknown } | null)?.code === PG_FOREIGN_KEY_VIOLATION;

/** A scope id deleted between the check and the write. */
const scopeGone = () =>
  ERRORS.validation([{ field: 'product_id', message: 'a product, competitor or listing of the rule was deleted meanwhile; try again' }]);

export async function createAlert(db: Database, accountId: string, body: AlertCreate): Promise<AlertRow> {
  const rule = withDefaults(body);
  try {
    return await db.transaction(async (tx) => {
      const listingCompetitor = await resolveScope(tx, accountId, rule, body);
      checkAlertRule(rule, listingCompetitor);
      return insertAlert(tx, accountId, newId('alrt'), rule);
    });
  } catch (err) {
    if (isForeignKeyViolation(err)) throw scopeGone();
    throw err;
  }
}

/** PUT and PATCH: the changes applied to the stored rule, then the whole rule checked as on creation. */
export async function changeAlert(db: Database, accountId: string, id: string, body: AlertUpdate): Promise<AlertRow> {
  try {
    return await db.transaction(async (tx) => {
      const row = await getAlert(tx, accountId, id, true);
      if (!row) throw ERRORS.notFound('Alert');
      const before = ruleOf(row);
      const rule: AlertRule = { ...before };
      for (const [k, v] of Object.entries(body)) if (v !== undefined) (rule as unknown as Record<string, unknown>)[k] = v;
      if (body.condition) rule.condition = normalizeCondition(body.condition);
      const listingCompetitor = await resolveScope(tx, accountId, rule, body);
      checkAlertRule(rule, listingCompetitor);
      // A new condition or scope is a new rule as far as its memory goes: streaks, re-arm and cap start afresh.
      const renewed = !sameCondition(rule.condition, before.condition) || SCOPE_FIELDS.some((f) => rule[f] !== before[f]);
      if (renewed) await deleteAlertStates(tx, id);
      return (await updateAlert(tx, accountId, id, rule))!;
    });
  } catch (err) {
    if (isForeignKeyViolation(err)) throw scopeGone();
    throw err;
  }
}

export async function removeAlert(db: Database, accountId: string, id: string): Promise<void> {
  if (!(await deleteAlert(db, accountId, id))) throw ERRORS.notFound('Alert');
}

/** Conditions are flat objects; the stored one comes back from jsonb with its keys reordered. */
const sameCondition = (a: object, b: object) =>
  Object.keys(a).length === Object.keys(b).length &&
  Object.entries(a).every(([k, v]) => (b as Record<string, unknown>)[k] === v);

function ruleOf(r: AlertRow): AlertRule {
  return {
    name: r.name,
    product_id: r.product_id,
    competitor_id: r.competitor_id,
    listing_id: r.listing_id,
    condition: r.condition,
    rearm: r.rearm,
    hysteresis_percent: Number(r.hysteresis_percent),
    cooldown_seconds: Number(r.cooldown_seconds),
    confirmations: Number(r.confirmations),
    daily_cap: r.daily_cap === null ? null : Number(r.daily_cap),
    enabled: r.enabled,
  };
}
