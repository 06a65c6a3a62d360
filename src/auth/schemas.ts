import { type Static, Type } from 'typebox';
import { Label, Nullable, ResourceId, Text, Timestamp } from '../http/fields.js';
import { CursorQuery, LimitQuery, listOf, SortQuery } from '../pagination/schemas.js';
import { describePlans, PLAN_NAMES } from './plans.js';
import { SCOPES } from './scopes.js';

/** API keys over HTTP (design/API.md "API keys over HTTP", docs/API-DECISIONS.md "API keys over HTTP"). */

export const KEY_NAME_MAX = 200;

/**
 * A key's name is a label for people (`CI`, `Grafana (read)`, `ops@shop / laptop`): `Label`, narrower
 * than product names on purpose. It is shown in terminals, logs and pages that list credentials,
 * and nothing about a key needs quotes, angle brackets, semicolons or control characters
 * (docs/API-DECISIONS.md). Names the operator's CLI gave before are shown as they are.
 */
const NameInput = Label(KEY_NAME_MAX, 'A label for people');

const SCOPE_TEXT =
  '`full`: everything the API offers, the keys included. `read`: GET and HEAD, `POST /alerts/preview`, `POST /alerts/matches` and `POST /extract` ' +
  '(they write nothing); anything else answers 403 `insufficient_scope`';
const ScopeField = (extra = '') => Type.String({ enum: [...SCOPES], description: SCOPE_TEXT + extra });
const PLAN_TEXT = `The key's hourly request limit: ${describePlans()}`;
const PlanField = (extra = '') => Type.String({ enum: [...PLAN_NAMES], description: PLAN_TEXT + extra });

export const ApiKeyCreateSchema = Type.Object(
  {
    name: Type.Optional(Nullable(NameInput)),
    scope: Type.Optional(ScopeField('. Default `full`')),
    plan: Type.Optional(PlanField('. At most the plan of the key that makes it, which is the default')),
  },
  { title: 'ApiKeyCreate', additionalProperties: false },
);
export type ApiKeyCreate = Static<typeof ApiKeyCreateSchema>;

/** Only the name changes: a key's scope and plan are what it was made with (make a new key instead). */
export const ApiKeyUpdateSchema = Type.Object(
  { name: Type.Optional(Nullable(NameInput)) },
  { title: 'ApiKeyUpdate', additionalProperties: false, description: 'Only `name` can change; `null` clears it' },
);
export type ApiKeyUpdate = Static<typeof ApiKeyUpdateSchema>;

const keyProperties = {
  id: ResourceId('key'),
  object: Type.Literal('api_key'),
  name: Nullable(Text(KEY_NAME_MAX, 'A label for people; null when none was given')),
  scope: ScopeField(),
  plan: PlanField(),
  prefix: Type.String({
    minLength: 12,
    maxLength: 12,
    pattern: '^ph_live_[A-Za-z0-9_-]{4}$',
    description:
      'The first 12 characters of the secret, to recognise it (`ph_live_` and 4 of its 43 random characters)',
  }),
  created_at: Timestamp('When the key was made'),
  last_used_at: Nullable(
    Timestamp(
      'When the key last authenticated a request, to within a few seconds (written in batches, not per request); null: never',
    ),
  ),
  revoked_at: Nullable(Timestamp('When the key was revoked; null while it works')),
};

export const ApiKeySchema = Type.Object(keyProperties, { title: 'ApiKey', additionalProperties: false });
export type ApiKeyJson = Static<typeof ApiKeySchema>;

/** The answer to create: the only one that holds the secret. */
export const ApiKeyWithSecretSchema = Type.Object(
  {
    ...keyProperties,
    secret: Type.String({
      minLength: 51,
      maxLength: 51,
      pattern: '^ph_live_[A-Za-z0-9_-]{43}$',
      description:
        'The key itself, shown only now: only its hash is stored. Send it as `Authorization: Bearer <secret>`',
    }),
  },
  { title: 'ApiKeyWithSecret', additionalProperties: false },
);

export const ApiKeyListSchema = listOf(ApiKeySchema, 'ApiKeyList');

export const ApiKeyListQuerySchema = Type.Object(
  {
    limit: Type.Optional(LimitQuery),
    cursor: Type.Optional(CursorQuery),
    sort: Type.Optional(SortQuery(['created_at'], '-created_at')),
    scope: Type.Optional(Type.String({ enum: [...SCOPES], description: 'Only keys of this scope' })),
    revoked: Type.Optional(Type.Boolean({ description: '`false`: only keys that work; `true`: only revoked ones' })),
  },
  { additionalProperties: false },
);

export const ApiKeyIdParams = Type.Object({ id: ResourceId('key') }, { additionalProperties: false });
