import { type Static, Type } from 'typebox';
import type { Queryable } from '../db/types.js';
import { ERRORS } from '../http/errors.js';
import { Timestamp } from '../http/fields.js';
import { loadExchangeRates } from '../money/convert.js';
import { numberToDecimal } from '../money/decimal.js';
import { AlertEventSchema, type ObservedPrice } from './alert-event.js';
import { runRules } from './engine/run.js';
import type { EngineRule } from './engine/rule.js';
import { SERIES_CONDITIONS, watchesOwn } from './engine/rule.js';
import { loadLows, loadPositions, loadStoredPoints } from './engine/sql.js';
import { AlertCreateSchema, checkAlertRule, withDefaults } from './schemas.js';
import { resolveScope } from './service.js';

/**
 * POST /alerts/preview (docs/alerts/firing.md, "Preview"): a rule body run over the stored
 * observations of a time range, from a fresh state, through the same machine as live
 * evaluation; nothing is written.
 */

export const PREVIEW_MAX_DAYS = 366;
export const PREVIEW_MAX_OBSERVATIONS = 50_000;

export const AlertPreviewSchema = Type.Object(
  {
    ...AlertCreateSchema.properties,
    from: Timestamp('Start of the range (inclusive): observations observed at or after it'),
    to: Timestamp(`End of the range (exclusive); after \`from\`, at most ${PREVIEW_MAX_DAYS} days later`),
  },
  {
    title: 'AlertPreview',
    additionalProperties: false,
    description: 'A rule body (as for POST /alerts; `enabled` is ignored) and the time range to run it over',
  },
);
export type AlertPreview = Static<typeof AlertPreviewSchema>;

export const PreviewAlertEventSchema = Type.Object(
  {
    ...AlertEventSchema.properties,
    id: Type.Null({ description: 'Always null: a preview creates nothing' }),
    alert_id: Type.Null({ description: 'Always null: the rule previewed is not stored' }),
    created_at: Timestamp('When the rule would have fired: the observed_at of the observation that fired it'),
  },
  { title: 'PreviewAlertEvent', additionalProperties: false },
);
export type PreviewAlertEvent = Static<typeof PreviewAlertEventSchema>;

export const AlertPreviewResultSchema = Type.Object(
  {
    data: Type.Array(PreviewAlertEventSchema, { description: 'The alert events the rule would have created, oldest first' }),
    count: Type.Integer({ format: 'int32', minimum: 0, maximum: PREVIEW_MAX_OBSERVATIONS, description: 'How many' }),
  },
  { title: 'AlertPreviewResult', additionalProperties: false },
);

export async function previewAlert(db: Queryable, accountId: string, body: AlertPreview): Promise<{ data: PreviewAlertEvent[]; count: number }> {
  const fromMs = Date.parse(body.from);
  const toMs = Date.parse(body.to);
  if (!Number.isFinite(fromMs)) throw ERRORS.validation([{ field: 'from', message: 'must be an instant that exists' }]);
  if (!Number.isFinite(toMs)) throw ERRORS.validation([{ field: 'to', message: 'must be an instant that exists' }]);
  if (toMs <= fromMs) throw ERRORS.validation([{ field: 'to', message: 'must be after `from`' }]);
  if (toMs - fromMs > PREVIEW_MAX_DAYS * 86_400_000) throw ERRORS.validation([{ field: 'to', message: `must be at most ${PREVIEW_MAX_DAYS} days after \`from\`` }]);

  const { from: _from, to: _to, ...ruleBody } = body;
  const rule = withDefaults(ruleBody);
  const listingCompetitor = await resolveScope(db, accountId, rule, ruleBody);
  checkAlertRule(rule, listingCompetitor);
  const type = rule.condition.type;
  if (type === 'not_cheapest' || type === 'listing_failing') {
    throw ERRORS.validation([
      { field: 'condition.type', message: `${type} cannot be previewed: ${type === 'not_cheapest' ? 'past ranks' : 'failed checks'} are not kept as a history` },
    ]);
  }
  const engineRule: EngineRule = {
    id: null,
    product_id: rule.product_id,
    competitor_id: rule.competitor_id,
    listing_id: rule.listing_id,
    condition_type: type,
    condition: rule.condition as EngineRule['condition'],
    rearm: rule.rearm,
    hysteresis_percent: numberToDecimal(rule.hysteresis_percent),
    cooldown_seconds: rule.cooldown_seconds,
    confirmations: rule.confirmations,
    daily_cap: rule.daily_cap,
  };
  const points = await loadStoredPoints(db, accountId, {
    product_id: rule.product_id,
    competitor_id: rule.competitor_id,
    listing_id: rule.listing_id,
    own: SERIES_CONDITIONS.has(type) ? watchesOwn(engineRule) : null,
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    limit: PREVIEW_MAX_OBSERVATIONS,
  });
  if (points.length > PREVIEW_MAX_OBSERVATIONS) {
    throw ERRORS.validation([{ field: 'from', message: `the range holds more than ${PREVIEW_MAX_OBSERVATIONS} observations of the rule's scope: narrow it` }]);
  }
  if (points.length === 0) return { data: [], count: 0 };
  if (type === 'undercut') {
    const positions = await loadPositions(db, accountId, [...new Set(points.map((p) => p.product_id))]);
    for (const p of points) Object.assign(p, positions.get(p.product_id) ?? { own_price: null, rank: null });
  }
  if (type === 'lowest_in_days') {
    const days = engineRule.condition.days ?? 1;
    const lows = await loadLows(db, accountId, points.map((p) => p.observation_id), [days]);
    for (const p of points) p.lows = lows.get(p.observation_id);
  }
  const { fired } = runRules([engineRule], points, new Map(), await loadExchangeRates(db, accountId));
  const data = fired.map(
    (f): PreviewAlertEvent => ({
      id: null,
      object: 'alert_event',
      alert_id: null,
      condition_type: f.condition_type,
      product_id: f.product_id,
      competitor_id: f.competitor_id,
      listing_id: f.listing_id,
      previous: f.previous as ObservedPrice | null,
      current: f.current,
      message: f.message,
      test: false,
      sequence: f.sequence,
      acknowledged_at: null,
      created_at: f.at.toISOString(),
    }),
  );
  return { data, count: data.length };
}
