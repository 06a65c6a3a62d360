import { type Static, Type } from 'typebox';
import { EventTypeSchema } from '../events/schemas.js';
import { Nullable, ResourceId, Timestamp } from '../http/fields.js';
import { CursorQuery, LimitQuery, listOf, SortQuery } from '../pagination/schemas.js';

/** Email subscriptions (docs/EMAIL.md, design/API.md "Email"). */

export const DIGESTS = ['none', 'daily', 'weekly'] as const;
export type Digest = (typeof DIGESTS)[number];

export const DEFAULT_EVENT_TYPES = ['alert.triggered'] as const;
export const DEFAULT_DIGEST_HOUR = 8;
/** RFC 5321's limit on a path (an address). */
export const ADDRESS_MAX = 254;
/** Wrong codes a subscription takes; the next round needs a new subscription. */
export const CODE_ATTEMPTS = 5;

/**
 * One mailbox, `local@domain`: printable ASCII without spaces, quotes, angle brackets, commas or
 * semicolons in the local part, a dotted domain of letters, digits and hyphens (or a non-ASCII
 * one). No CR, LF or other control character can get through: an address never adds a header.
 */
export const TIME_ZONE_PATTERN = '^[A-Za-z][A-Za-z0-9_+/-]*$';
export const ADDRESS_PATTERN =
  "^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}@(?=.{1,253}$)[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]{0,62}[\\p{L}\\p{N}])?(?:\\.[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]{0,62}[\\p{L}\\p{N}])?)+$";

const fields = {
  address: Type.String({
    minLength: 3,
    maxLength: ADDRESS_MAX,
    pattern: ADDRESS_PATTERN,
    description: 'The mailbox to write to, `name@example.com` (one address, no display name)',
  }),
  event_types: Type.Array(EventTypeSchema, {
    maxItems: 100,
    description:
      'The event types mailed, as for webhooks; empty: all of them. Default `["alert.triggered"]`. `webhook.test` is never mailed',
  }),
  digest: Type.String({
    enum: [...DIGESTS],
    description:
      '`none` (default): a mail per minute with events; `daily` or `weekly` (Mondays): one digest at `digest_hour` in `time_zone` instead',
  }),
  digest_hour: Type.Integer({
    format: 'int32',
    minimum: 0,
    maximum: 23,
    description: 'The hour (0-23, in `time_zone`) digests go out; default 8',
  }),
  time_zone: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: TIME_ZONE_PATTERN,
    description: 'IANA time zone of the digests, e.g. `Europe/Berlin`; default `UTC`',
  }),
  enabled: Type.Boolean({ description: 'false: nothing is mailed (default true)' }),
};

export const EmailSubscriptionCreateSchema = Type.Object(
  {
    address: fields.address,
    event_types: Type.Optional(fields.event_types),
    digest: Type.Optional(fields.digest),
    digest_hour: Type.Optional(fields.digest_hour),
    time_zone: Type.Optional(fields.time_zone),
    enabled: Type.Optional(fields.enabled),
  },
  { title: 'EmailSubscriptionCreate', additionalProperties: false },
);
export type EmailSubscriptionCreate = Static<typeof EmailSubscriptionCreateSchema>;

/** PATCH: only the fields sent change. The address cannot change: create another subscription. */
export const EmailSubscriptionUpdateSchema = Type.Object(
  {
    event_types: Type.Optional(fields.event_types),
    digest: Type.Optional(fields.digest),
    digest_hour: Type.Optional(fields.digest_hour),
    time_zone: Type.Optional(fields.time_zone),
    enabled: Type.Optional(fields.enabled),
  },
  { title: 'EmailSubscriptionUpdate', additionalProperties: false },
);
export type EmailSubscriptionUpdate = Static<typeof EmailSubscriptionUpdateSchema>;

export const EmailSubscriptionSchema = Type.Object(
  {
    object: Type.Literal('email_subscription'),
    id: ResourceId('esub'),
    address: Type.String({ maxLength: ADDRESS_MAX, pattern: ADDRESS_PATTERN }),
    event_types: Type.Array(EventTypeSchema, { maxItems: 100, description: 'Empty: every event type' }),
    digest: Type.String({ enum: [...DIGESTS] }),
    digest_hour: Type.Integer({ format: 'int32', minimum: 0, maximum: 23 }),
    time_zone: Type.String({ maxLength: 64, pattern: TIME_ZONE_PATTERN, description: 'IANA time zone of the digests' }),
    confirmed_at: Nullable(
      Timestamp('When the address was confirmed with its code; null: nothing is mailed but the code'),
    ),
    enabled: Type.Boolean({ description: 'false: nothing is mailed (set by you, or by the unsubscribe link)' }),
    created_at: Timestamp('When the subscription was created'),
    updated_at: Timestamp('When it last changed'),
  },
  { title: 'EmailSubscription', additionalProperties: false },
);
export type EmailSubscription = Static<typeof EmailSubscriptionSchema>;

export const EmailSubscriptionListSchema = listOf(EmailSubscriptionSchema, 'EmailSubscriptionList');

export const EmailSubscriptionListQuerySchema = Type.Object(
  {
    limit: Type.Optional(LimitQuery),
    cursor: Type.Optional(CursorQuery),
    sort: Type.Optional(SortQuery(['created_at'], '-created_at')),
  },
  { additionalProperties: false },
);
export type EmailSubscriptionListQuery = Static<typeof EmailSubscriptionListQuerySchema>;

export const EmailSubscriptionIdParams = Type.Object({ id: ResourceId('esub') }, { additionalProperties: false });

export const EmailConfirmSchema = Type.Object(
  {
    code: Type.String({
      minLength: 1,
      maxLength: 20,
      pattern: '^[0-9]+$',
      description: 'The 6-digit code mailed to the address',
    }),
  },
  { title: 'EmailConfirm', additionalProperties: false },
);
export type EmailConfirm = Static<typeof EmailConfirmSchema>;

export const UnsubscribeQuerySchema = Type.Object(
  {
    s: Type.String({
      minLength: 1,
      maxLength: 400,
      description: 'The signed token of the link in the mail (it names one subscription and works once)',
    }),
  },
  { additionalProperties: false },
);

export const UNSUBSCRIBED_MESSAGE =
  'You are unsubscribed: pricehound mails nothing more to this address for this subscription.' as const;

export const UnsubscribeResultSchema = Type.Object(
  {
    unsubscribed: Type.Literal(true),
    message: Type.Literal(UNSUBSCRIBED_MESSAGE),
  },
  { title: 'UnsubscribeResult', additionalProperties: false },
);
