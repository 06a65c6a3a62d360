import { type Static, Type } from 'typebox';
import { EVENT_TYPES, EventTypeSchema } from '../events/schemas.js';
import { HttpUrl, NO_NUL, Nullable, OrNull, ResourceId, Text, Timestamp } from '../http/fields.js';
import { CursorQuery, LimitQuery, listOf, SortQuery } from '../pagination/schemas.js';

/** Webhook endpoints and their delivery log (docs/WEBHOOKS.md, design/API.md "Events and webhooks"). */

export const WEBHOOK_FORMATS = ['standard', 'slack'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export const DESCRIPTION_MAX = 500;

/** `whsec_` + base64 of 24 to 64 bytes (32 when we make one): 32 to 88 base64 characters. */
export const SECRET_PATTERN = '^whsec_[A-Za-z0-9+/]{32,88}={0,2}$';

const fields = {
  url: HttpUrl(
    'Where events are POSTed. Private, loopback, link-local and cloud metadata addresses are refused (as for page ' +
      'fetches), and so are URLs with a user name or password',
  ),
  description: Text(DESCRIPTION_MAX, 'A note for people: what the endpoint is for'),
  event_types: Type.Array(EventTypeSchema, {
    maxItems: 100,
    description: 'The event types sent to this endpoint; empty: all of them. Repeated types count once',
  }),
  format: Type.String({
    enum: [...WEBHOOK_FORMATS],
    description:
      '`standard`: the signed event envelope (Standard Webhooks); `slack`: a `{"text": ...}` body that a chat incoming-webhook accepts',
  }),
  enabled: Type.Boolean({
    description: 'false: nothing is sent (default true). Setting true again clears `disabled_reason`',
  }),
};

export const WebhookCreateSchema = Type.Object(
  {
    url: fields.url,
    description: Type.Optional(Nullable(fields.description)),
    event_types: Type.Optional(fields.event_types),
    format: Type.Optional(fields.format),
    enabled: Type.Optional(fields.enabled),
  },
  { title: 'WebhookCreate', additionalProperties: false },
);
export type WebhookCreate = Static<typeof WebhookCreateSchema>;

/** PUT and PATCH: only the fields sent change. */
export const WebhookUpdateSchema = Type.Object(
  {
    url: Type.Optional(fields.url),
    description: Type.Optional(Nullable(fields.description)),
    event_types: Type.Optional(fields.event_types),
    format: Type.Optional(fields.format),
    enabled: Type.Optional(fields.enabled),
  },
  { title: 'WebhookUpdate', additionalProperties: false },
);
export type WebhookUpdate = Static<typeof WebhookUpdateSchema>;

const webhookProperties = {
  id: ResourceId('wh'),
  object: Type.Literal('webhook'),
  url: Type.String({ format: 'uri', maxLength: 2048 }),
  description: Nullable(Text(DESCRIPTION_MAX)),
  event_types: Type.Array(EventTypeSchema, { maxItems: EVENT_TYPES.length, description: 'Empty: every event type' }),
  format: Type.String({ enum: [...WEBHOOK_FORMATS] }),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(
    Type.String({
      maxLength: 1000,
      pattern: NO_NUL,
      description:
        'Why pricehound disabled the endpoint (a 410 answer, or days without a success); null when enabled or disabled by you',
    }),
  ),
  created_at: Timestamp('When the endpoint was created'),
  updated_at: Timestamp('When the endpoint last changed'),
};

export const WebhookSchema = Type.Object(webhookProperties, { title: 'Webhook', additionalProperties: false });
export type Webhook = Static<typeof WebhookSchema>;

/** The answers to create and rotate-secret: the only ones that show the secret. */
export const WebhookWithSecretSchema = Type.Object(
  {
    ...webhookProperties,
    secret: Type.String({
      maxLength: 100,
      pattern: SECRET_PATTERN,
      description:
        'The signing secret: `whsec_` + base64 of random bytes. Shown only now; keep it where your receiver verifies signatures',
    }),
  },
  { title: 'WebhookWithSecret', additionalProperties: false },
);
export type WebhookWithSecret = Static<typeof WebhookWithSecretSchema>;

export const WebhookListSchema = listOf(WebhookSchema, 'WebhookList');

export const WebhookListQuerySchema = Type.Object(
  {
    limit: Type.Optional(LimitQuery),
    cursor: Type.Optional(CursorQuery),
    sort: Type.Optional(SortQuery(['created_at'], '-created_at')),
    enabled: Type.Optional(
      Type.Boolean({ description: 'Only enabled or only disabled endpoints (`true` or `false`)' }),
    ),
  },
  { additionalProperties: false },
);

export const WebhookIdParams = Type.Object({ id: ResourceId('wh') }, { additionalProperties: false });

export const RotateSecretSchema = Type.Object(
  {
    expire_previous_in_seconds: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 0,
        maximum: 30 * 86_400,
        description:
          "How long the previous secret keeps signing beside the new one, in seconds: at most the deployment's overlap " +
          '(`WEBHOOK_SECRET_OVERLAP`, 24 hours by default), which is also the default; 0 retires it at once',
      }),
    ),
  },
  { title: 'RotateSecret', additionalProperties: false },
);
export type RotateSecret = Static<typeof RotateSecretSchema>;

export const WebhookTestSchema = Type.Object(
  {
    message: Type.Optional(Text(500, "Text carried in the test event's `data.message`")),
  },
  { title: 'WebhookTest', additionalProperties: false },
);
export type WebhookTest = Static<typeof WebhookTestSchema>;

/** The `data` of a `webhook.test` event. */
export const WebhookTestDataSchema = Type.Object(
  {
    object: Type.Literal('webhook_test'),
    webhook_id: ResourceId('wh'),
    message: Type.String({ maxLength: 500, description: 'The text sent as `message`, or a default one' }),
  },
  { title: 'WebhookTestData', additionalProperties: false },
);
export type WebhookTestData = Static<typeof WebhookTestDataSchema>;

// ---- Deliveries --------------------------------------------------------------------------------

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export const DELIVERY_TRIGGERS = ['scheduled', 'manual'] as const;

export const RESPONSE_BODY_MAX = 1024;

export const DeliverySchema = Type.Object(
  {
    id: ResourceId('whdl'),
    event_id: ResourceId('evt'),
    event_type: EventTypeSchema,
    attempt: Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: 2_147_483_647,
      description: '1 for the first attempt; retries and redeliveries count on',
    }),
    status: Type.String({ enum: [...DELIVERY_STATUSES], description: '`pending` until the attempt is made' }),
    response_status: OrNull(Type.Integer({ format: 'int32', minimum: 100, maximum: 999 }), {
      description: "The receiver's HTTP status; null without an answer",
    }),
    duration_ms: OrNull(Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647 }), {
      description: 'How long the attempt took',
    }),
    response_body: Nullable(
      Type.String({
        maxLength: RESPONSE_BODY_MAX,
        pattern: NO_NUL,
        description: "The first 1 KB of the receiver's answer",
      }),
    ),
    error: Nullable(
      Type.String({
        maxLength: 1000,
        pattern: NO_NUL,
        description: 'Why there was no HTTP answer (timeout, refused, DNS, a blocked address)',
      }),
    ),
    trigger: Type.String({
      enum: [...DELIVERY_TRIGGERS],
      description: '`manual`: queued by redeliver; `scheduled`: everything else',
    }),
    created_at: Timestamp('When the attempt was queued'),
    next_attempt_at: Nullable(Timestamp('When a pending attempt is due')),
  },
  { title: 'WebhookDelivery', additionalProperties: false },
);
export type Delivery = Static<typeof DeliverySchema>;

export const DeliveryListSchema = listOf(DeliverySchema, 'WebhookDeliveryList');

export const DeliveryListQuerySchema = Type.Object(
  {
    limit: Type.Optional(LimitQuery),
    cursor: Type.Optional(CursorQuery),
    sort: Type.Optional(SortQuery(['created_at'], '-created_at')),
    status: Type.Optional(Type.String({ enum: [...DELIVERY_STATUSES], description: 'Only attempts in this state' })),
    event_id: Type.Optional(ResourceId('evt')),
  },
  { additionalProperties: false },
);

export const REDELIVER_RANGE_MAX_DAYS = 30;

export const RedeliverSchema = Type.Object(
  {
    event_id: Type.Optional(ResourceId('evt')),
    since: Type.Optional(
      Timestamp('With `until`: redeliver every event created at or after this instant whose latest attempt failed'),
    ),
    until: Type.Optional(Timestamp('With `since`: events created before this instant (at most 30 days after `since`)')),
  },
  {
    title: 'Redeliver',
    additionalProperties: false,
    description:
      'Either `event_id` (one event of the account) or `since` and `until` (every failed event in the range), not both',
  },
);
export type Redeliver = Static<typeof RedeliverSchema>;

export const RedeliverResultSchema = Type.Object(
  {
    queued: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'How many attempts were queued',
    }),
  },
  { title: 'RedeliverResult', additionalProperties: false },
);
