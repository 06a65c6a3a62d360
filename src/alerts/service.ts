import type { Database, Queryable } from '../db/types.js';
import { PG_FOREIGN_KEY_VIOLATION } from '../db/types.js';
import { ERRORS, type ErrorDetail } from '../http/errors.js';
import { newId } from '../ids.js';
import {
  type AlertCreate,
  type AlertRule,
  type AlertUpdate,
  checkAlertRule,
  engineRuleOf,
  normalizeCondition,
  seriesOf,
  withDefaults,
} from './schemas.js';
import type { AlertEvent, AlertEventRow } from './alert-event.js';
import { recordFirings } from './fired.js';
import { amount } from './engine/message.js';
import { judgeExisting } from './engine/existing.js';
import { toFiring } from './engine/live.js';
import { saveStates } from './engine/sql.js';
import {
  acknowledgeAlertEvents,
  type AlertRow,
  toAlert,
  deleteAlert,
  deleteAlertStates,
  findScopeRefs,
  getAlert,
  insertAlert,
  latestInScope,
  type ScopeObservation,
  updateAlert,
} from './sql.js';

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
export async function resolveScope(
  db: Queryable,
  accountId: string,
  rule: Scope,
  sent: Partial<Scope>,
): Promise<string | null | undefined> {
  if (rule.product_id === null && rule.competitor_id === null && rule.listing_id === null) return undefined;
  const refs = await findScopeRefs(db, accountId, rule);
  const details: ErrorDetail[] = [];
  if (rule.product_id !== null && !refs.product)
    details.push({ field: 'product_id', message: 'is not a product of this account' });
  if (rule.competitor_id !== null && !refs.competitor)
    details.push({ field: 'competitor_id', message: 'is not a competitor of this account' });
  if (rule.listing_id !== null && !refs.listing)
    details.push({ field: 'listing_id', message: 'is not a listing of this account' });
  if (details.length > 0) throw ERRORS.validation(details, "The alert rule's scope is not in this account");
  const listing = refs.listing;
  if (!listing) return undefined;
  const own: Scope = {
    product_id: listing.product_id,
    competitor_id: listing.competitor_id,
    listing_id: rule.listing_id,
  };
  for (const f of ['product_id', 'competitor_id'] as const) {
    const value = sent[f];
    if (value !== undefined && value !== null && value !== own[f]) {
      details.push({
        field: f,
        message: `does not match listing ${rule.listing_id}, which belongs to ${own[f] ?? 'our own shop'}`,
      });
    }
  }
  if (details.length > 0) throw ERRORS.validation(details, "The alert rule's scope is not consistent");
  rule.product_id = own.product_id;
  rule.competitor_id = own.competitor_id;
  return listing.competitor_id;
}

const isForeignKeyViolation = (err: unknown) => (err as { code?: unknown } | null)?.code === PG_FOREIGN_KEY_VIOLATION;

/** A scope id deleted between the check and the write. */
const scopeGone = () =>
  ERRORS.validation([
    { field: 'product_id', message: 'a product, competitor or listing of the rule was deleted meanwhile; try again' },
  ]);

/**
 * Takes in what already holds as rule `id` starts (created, or given a new condition or scope), in
 * the caller's transaction (docs/alerts/firing.md, "What already holds"): every subject on which
 * its condition holds now (engine/existing.ts, as POST /alerts/matches shows them) gets the state
 * it would have had, had the rule fired on its latest point. With `fire` the rule fires on each
 * now (alert events and `alert.triggered` events, as live evaluation writes them); without, the
 * firings are not recorded and count against no daily cap, so each subject fires once its
 * condition has cleared and holds again (on_clear; cooldown: once the cooldown has passed).
 */
export async function startRule(
  tx: Queryable,
  accountId: string,
  id: string,
  rule: AlertRule,
  fire: boolean,
): Promise<void> {
  const found = await judgeExisting(tx, accountId, engineRuleOf(id, rule));
  await saveStates(
    tx,
    found.map((f) => ({
      alert_id: id,
      subject: f.subject,
      state: fire ? f.state : { ...f.state, cap_day: null, cap_count: 0 },
    })),
  );
  if (fire)
    await recordFirings(
      tx,
      accountId,
      found.map((f) => toFiring(f.fired)),
    );
}

/** fire_existing with a disabled rule: it fires nothing. */
function checkFireExisting(rule: AlertRule, fire: boolean | undefined): void {
  if (fire && !rule.enabled)
    throw ERRORS.validation([
      { field: 'fire_existing', message: 'a disabled rule fires nothing: enable it, or leave fire_existing out' },
    ]);
}

export async function createAlert(db: Database, accountId: string, body: AlertCreate): Promise<AlertRow> {
  const rule = withDefaults(body);
  try {
    return await db.transaction(async (tx) => {
      const listingCompetitor = await resolveScope(tx, accountId, rule, body);
      checkAlertRule(rule, listingCompetitor);
      checkFireExisting(rule, body.fire_existing);
      const row = await insertAlert(tx, accountId, newId('alrt'), rule);
      await startRule(tx, accountId, row.id, rule, body.fire_existing ?? false);
      return row;
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
      const { fire_existing: fire, ...changes } = body;
      for (const [k, v] of Object.entries(changes))
        if (v !== undefined) (rule as unknown as Record<string, unknown>)[k] = v;
      if (body.condition) rule.condition = normalizeCondition(body.condition);
      const listingCompetitor = await resolveScope(tx, accountId, rule, body);
      checkAlertRule(rule, listingCompetitor);
      // A new condition or scope is a new rule as far as its memory goes: streaks, re-arm and cap start afresh.
      const renewed =
        !sameCondition(rule.condition, before.condition) || SCOPE_FIELDS.some((f) => rule[f] !== before[f]);
      if (fire !== undefined && !renewed)
        throw ERRORS.validation([
          {
            field: 'fire_existing',
            message: 'applies only with a new condition or scope, when the rule starts afresh',
          },
        ]);
      checkFireExisting(rule, fire);
      if (renewed) {
        await deleteAlertStates(tx, id);
        await startRule(tx, accountId, id, rule, fire ?? false);
      }
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

/** The rule's settings as a body would state them: the API shape without its identity and times. */
function ruleOf(r: AlertRow): AlertRule {
  const { id: _id, object: _object, created_at: _created, updated_at: _updated, ...rule } = toAlert(r);
  return { ...rule, rearm: r.rearm };
}

export async function acknowledgeOne(db: Queryable, accountId: string, id: string): Promise<AlertEventRow> {
  const [row] = await acknowledgeAlertEvents(db, accountId, [id]);
  if (!row) throw ERRORS.notFound('Alert event');
  return row;
}

/** Ids that are not the account's are reported, not refused: one deleted with its rule meanwhile must not block the rest. */
export async function acknowledgeMany(
  db: Queryable,
  accountId: string,
  ids: readonly string[],
): Promise<{ rows: AlertEventRow[]; notFound: string[] }> {
  const unique = [...new Set(ids)];
  const rows = await acknowledgeAlertEvents(db, accountId, unique);
  const found = new Set(rows.map((r) => r.id));
  return { rows, notFound: unique.filter((id) => !found.has(id)) };
}

const observed = (price: string | number, currency: string, inStock: boolean | null, at: Date) => ({
  price: Number(price),
  currency,
  in_stock: inStock,
  observed_at: at.toISOString(),
});

function testMessage(name: string, o: ScopeObservation | undefined): string {
  if (!o)
    return `Test of the rule "${name}": no price has been recorded in its scope yet, so there is no current data.`;
  const seller = o.competitor_id === null ? 'in our shop' : `at ${o.competitor_name ?? 'a competitor'}`;
  const stock = o.in_stock === false ? ', out of stock' : '';
  return `Test of the rule "${name}": the latest price of ${o.product_name} ${seller} is ${amount(o.price, o.currency)}${stock}.`;
}

/**
 * POST /alerts/{id}/test: an alert event marked `test` (with its `alert.triggered` event) carrying
 * the latest observation of a series in the rule's scope and the one before it. It fires whether
 * the condition holds or not, enabled or not, and leaves the rule's state and daily cap alone.
 */
export async function testAlert(db: Database, accountId: string, id: string): Promise<AlertEvent> {
  return db.transaction(async (tx) => {
    const row = await getAlert(tx, accountId, id);
    if (!row) throw ERRORS.notFound('Alert');
    const c = row.condition;
    const series = seriesOf(c) ?? (c.type === 'listing_failing' ? 'any' : 'competitors');
    const o = await latestInScope(tx, accountId, row, series);
    const [event] = await recordFirings(tx, accountId, [
      {
        alert_id: row.id,
        condition_type: row.condition_type,
        product_id: o?.product_id ?? row.product_id,
        competitor_id: o ? o.competitor_id : row.competitor_id,
        listing_id: row.listing_id ?? o?.listing_id ?? null,
        previous:
          o && o.prev_price !== null
            ? observed(o.prev_price, o.prev_currency!, o.prev_in_stock, o.prev_observed_at!)
            : null,
        current: o ? observed(o.price, o.currency, o.in_stock, o.observed_at) : null,
        message: testMessage(row.name, o),
        test: true,
        sequence: null,
      },
    ]);
    return event!;
  });
}

/** The engine's entry points for new observations and failed checks (prices and checks call them). */
export { evaluateCheckFailure, evaluateObservations } from './engine/live.js';
