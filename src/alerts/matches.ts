import { type Static, Type } from 'typebox';
import { bulkReader, type Database } from '../db/types.js';
import { OrNull } from '../http/fields.js';
import { AlertEventSchema, type ObservedPrice } from './alert-event.js';
import { judgeExisting } from './engine/existing.js';
import { type AlertCreate, RULE_BODY_PROPERTIES, checkAlertRule, engineRuleOf, withDefaults } from './schemas.js';
import { resolveScope } from './service.js';

/**
 * POST /alerts/matches (docs/alerts/firing.md, "What already holds"): which subjects of a rule
 * body's scope meet its condition now, asked while the rule is being written, so the person
 * can choose whether they fire when it is saved (`fire_existing`, src/alerts/service.ts).
 */

/** The matches answered at most. */
export const MATCHES_MAX = 100;

const { previous, current, message, product_id, competitor_id, listing_id, condition_type } =
  AlertEventSchema.properties;

export const AlertMatchSchema = Type.Object(
  {
    condition_type,
    product_id: { ...product_id, description: 'The product' },
    product_name: Type.String({ maxLength: 200, description: "The product's name" }),
    competitor_id: {
      ...competitor_id,
      description:
        'The competitor whose series meets the condition; null: our own series (or a product, for `not_cheapest`, when our own price is the latest seen)',
    },
    competitor_name: OrNull(Type.String({ maxLength: 200 }), {
      description: "The competitor's name as written; null: our own",
    }),
    listing_id: { ...listing_id, description: 'The page of the latest price (or the failing listing), if any' },
    previous,
    current,
    message: { ...message, description: 'The sentence the alert event would say' },
  },
  {
    title: 'AlertMatch',
    additionalProperties: false,
    description:
      'A series (a product for `not_cheapest`, a listing for `listing_failing`) whose latest state meets the condition now',
  },
);
export type AlertMatch = Static<typeof AlertMatchSchema>;

export const AlertMatchesSchema = Type.Object(
  {
    data: Type.Array(AlertMatchSchema, {
      maxItems: MATCHES_MAX,
      description: `The first ${MATCHES_MAX} matches, by product name, then competitor name (our own first)`,
    }),
    count: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'How many subjects meet the condition now, all of them (`data` holds the first ones)',
    }),
  },
  { title: 'AlertMatches', additionalProperties: false },
);
export type AlertMatches = Static<typeof AlertMatchesSchema>;

export const AlertMatchQuerySchema = Type.Object(RULE_BODY_PROPERTIES, {
  title: 'AlertMatchQuery',
  additionalProperties: false,
  description: 'A rule body, as for POST /alerts (without `fire_existing`; `enabled` is ignored)',
});
export type AlertMatchQuery = Static<typeof AlertMatchQuerySchema>;

const byName = new Intl.Collator('en', { sensitivity: 'base', numeric: true });
/** Names in order, null (our own) first. */
const nameOrder = (a: string | null, b: string | null) =>
  a === b ? 0 : a === null ? -1 : b === null ? 1 : byName.compare(a, b);

/** POST /alerts/matches: the subjects of a rule body's scope that meet its condition now. Writes nothing. */
export async function matchAlert(database: Database, accountId: string, body: AlertMatchQuery): Promise<AlertMatches> {
  const db = bulkReader(database);
  const rule = withDefaults(body as AlertCreate);
  const listingCompetitor = await resolveScope(db, accountId, rule, body);
  checkAlertRule(rule, listingCompetitor);
  const found = await judgeExisting(db, accountId, engineRuleOf(null, rule));
  const items = found.map(({ point: p, fired: f }) => ({
    condition_type: f.condition_type as AlertMatch['condition_type'],
    product_id: f.product_id,
    product_name: p.product_name,
    competitor_id: f.competitor_id,
    competitor_name: p.competitor_name,
    listing_id: f.listing_id,
    previous: f.previous as ObservedPrice | null,
    current: f.current,
    message: f.message,
  }));
  items.sort(
    (a, b) =>
      byName.compare(a.product_name, b.product_name) ||
      a.product_id.localeCompare(b.product_id) ||
      nameOrder(a.competitor_name, b.competitor_name) ||
      (a.competitor_id ?? '').localeCompare(b.competitor_id ?? '') ||
      (a.listing_id ?? '').localeCompare(b.listing_id ?? ''),
  );
  return { data: items.slice(0, MATCHES_MAX), count: items.length };
}
