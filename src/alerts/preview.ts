import { type Static, Type } from 'typebox';
import { bulkReader, type Database } from '../db/types.js';
import { ERRORS } from '../http/errors.js';
import { Timestamp } from '../http/fields.js';
import { loadExchangeRates } from '../money/convert.js';
import { AlertEventSchema, type ObservedPrice } from './alert-event.js';
import { replayStoredPoints, turn } from './engine/history.js';
import { loadSequences } from './engine/history-sql.js';
import type { RuleState } from './engine/machine.js';
import { type Fired, runRules } from './engine/run.js';
import { SERIES_CONDITIONS } from './condition-types.js';
import { watchesOwn } from './engine/rule.js';
import { attachPositions } from './engine/live.js';
import { windowsOf } from './engine/sql.js';
import { RULE_BODY_PROPERTIES, checkAlertRule, engineRuleOf, withDefaults } from './schemas.js';
import { resolveScope } from './service.js';

/**
 * POST /alerts/preview (docs/alerts/firing.md, "Preview"): a rule body run over the stored
 * observations of a time range, from a fresh state, through the same machine as live
 * evaluation; nothing is written. The observations are replayed as live evaluation saw them
 * (engine/history.ts) in bounded pages, within a time limit, stopped when the client goes away.
 */

export const PREVIEW_MAX_DAYS = 366;
export const PREVIEW_MAX_OBSERVATIONS = 50_000;

export const AlertPreviewSchema = Type.Object(
  {
    ...RULE_BODY_PROPERTIES,
    from: Timestamp('Start of the range (inclusive): observations observed at or after it'),
    to: Timestamp(`End of the range (exclusive); after \`from\`, at most ${PREVIEW_MAX_DAYS} days later`),
  },
  {
    title: 'AlertPreview',
    additionalProperties: false,
    description:
      'A rule body (as for POST /alerts, without `fire_existing`; `enabled` is ignored) and the time range to run it over',
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
    // At most one firing per observation, and a preview reads at most PREVIEW_MAX_OBSERVATIONS.
    data: Type.Array(PreviewAlertEventSchema, {
      maxItems: PREVIEW_MAX_OBSERVATIONS,
      description: 'The alert events the rule would have created, oldest first',
    }),
    count: Type.Integer({ format: 'int32', minimum: 0, maximum: PREVIEW_MAX_OBSERVATIONS, description: 'How many' }),
    complete: Type.Boolean({
      description:
        'false: the preview reached its time limit (ALERT_PREVIEW_TIMEOUT) and stopped; `data` holds what the observations before `through` fired',
    }),
    through: Timestamp(
      'The observations evaluated are those observed from `from` up to this instant (exclusive): `to`, or earlier when `complete` is false',
    ),
  },
  { title: 'AlertPreviewResult', additionalProperties: false },
);

export interface PreviewOptions {
  /** Reading stops this many ms after the start (the answer then says `complete: false`). */
  timeLimitMs: number;
  /** Aborted when the client goes away: the work stops. */
  signal?: AbortSignal | undefined;
  /** Counts the observations read so far (for the log of a preview stopped midway). */
  progress?: { observations: number } | undefined;
}

export interface PreviewResult {
  data: PreviewAlertEvent[];
  count: number;
  complete: boolean;
  through: string;
}

/** Points judged per turn of the event loop, so other requests are served between them. */
const RUN_SLICE = 2000;

export async function previewAlert(
  database: Database,
  accountId: string,
  body: AlertPreview,
  opts: PreviewOptions,
): Promise<PreviewResult> {
  const deadline = Date.now() + opts.timeLimitMs;
  const db = bulkReader(database);
  const fromMs = Date.parse(body.from);
  const toMs = Date.parse(body.to);
  if (!Number.isFinite(fromMs)) throw ERRORS.validation([{ field: 'from', message: 'must be an instant that exists' }]);
  if (!Number.isFinite(toMs)) throw ERRORS.validation([{ field: 'to', message: 'must be an instant that exists' }]);
  if (toMs <= fromMs) throw ERRORS.validation([{ field: 'to', message: 'must be after `from`' }]);
  if (toMs - fromMs > PREVIEW_MAX_DAYS * 86_400_000)
    throw ERRORS.validation([{ field: 'to', message: `must be at most ${PREVIEW_MAX_DAYS} days after \`from\`` }]);

  const { from: _from, to: _to, ...ruleBody } = body;
  const rule = withDefaults(ruleBody);
  const listingCompetitor = await resolveScope(db, accountId, rule, ruleBody);
  checkAlertRule(rule, listingCompetitor);
  const type = rule.condition.type;
  if (type === 'not_cheapest' || type === 'listing_failing') {
    throw ERRORS.validation([
      {
        field: 'condition.type',
        message: `${type} cannot be previewed: ${type === 'not_cheapest' ? 'past ranks' : 'failed checks'} are not kept as a history`,
      },
    ]);
  }
  const engineRule = engineRuleOf(null, rule);
  const rates = await loadExchangeRates(db, accountId);
  const replay = await replayStoredPoints(
    db,
    accountId,
    {
      product_id: rule.product_id,
      competitor_id: rule.competitor_id,
      own: SERIES_CONDITIONS.has(type) ? watchesOwn(engineRule) : null,
      from: new Date(fromMs),
      to: new Date(toMs),
    },
    {
      limit: PREVIEW_MAX_OBSERVATIONS,
      listingId: rule.listing_id,
      windows: type === 'lowest_in_days' ? windowsOf([engineRule.condition.days ?? 1]) : [],
      rates,
      deadline,
      signal: opts.signal,
      progress: opts.progress,
    },
  );
  if (replay.exceeded) {
    throw ERRORS.validation([
      {
        field: 'from',
        message: `the range holds more than ${PREVIEW_MAX_OBSERVATIONS} observations of the rule's scope: narrow it`,
      },
    ]);
  }
  const { points, complete } = replay;
  const through = replay.through.toISOString();
  if (points.length === 0) return { data: [], count: 0, complete, through };
  await attachPositions(db, accountId, [engineRule], points);
  const fired: Fired[] = [];
  const states = new Map<string, RuleState>();
  for (let i = 0; i < points.length; i += RUN_SLICE) {
    opts.signal?.throwIfAborted();
    fired.push(...runRules([engineRule], points.slice(i, i + RUN_SLICE), states, rates).fired);
    await turn();
  }
  // The change sequence of each observation that fired (only those: the rest need none).
  const firedIds = fired.flatMap((f) => (f.observation_id === null ? [] : [f.observation_id]));
  for (let i = 0; i < firedIds.length; i += RUN_SLICE) {
    const sequences = await loadSequences(db, firedIds.slice(i, i + RUN_SLICE));
    for (const f of fired)
      if (f.observation_id !== null && sequences.has(f.observation_id)) f.sequence = sequences.get(f.observation_id)!;
  }
  const data = fired.map((f): PreviewAlertEvent => ({
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
  }));
  return { data, count: data.length, complete, through };
}
