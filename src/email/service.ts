import type { Database, Queryable } from '../db/types.js';
import { ERRORS } from '../http/errors.js';
import { newId } from '../ids.js';
import { canonicalTimeZone } from '../prices/service.js';
import { renderConfirmation } from './render.js';
import {
  CODE_ATTEMPTS,
  DEFAULT_DIGEST_HOUR,
  DEFAULT_EVENT_TYPES,
  type Digest,
  type EmailSubscriptionCreate,
  type EmailSubscriptionUpdate,
} from './schemas.js';
import {
  deleteSubscription,
  dropPendingMail,
  getSubscription,
  getSubscriptionForToken,
  insertMessage,
  insertSubscription,
  markConfirmed,
  markUnsubscribed,
  notifyEmailWorkers,
  recordCodeFailure,
  type SubscriptionChanges,
  type SubscriptionStateRow,
  updateSubscription,
} from './sql.js';
import { EmailSecrets, sameNonce } from './tokens.js';

/** What email needs of the deployment (src/config.ts). */
export interface EmailSettings {
  /** Unset: email is off. */
  smtpUrl: string | undefined;
  /** Where the links in mails point: PUBLIC_URL. */
  publicUrl: string;
}

export interface EmailContext {
  db: Database;
  settings: EmailSettings;
  secrets: EmailSecrets;
}

export const UNSUBSCRIBE_PATH = '/email/unsubscribe';

export const unsubscribeUrl = (settings: EmailSettings, secrets: EmailSecrets, subscriptionId: string, nonce: string) =>
  `${settings.publicUrl}${UNSUBSCRIBE_PATH}?s=${secrets.unsubscribeToken(subscriptionId, nonce)}`;

const distinct = (types: readonly string[]) => [...new Set(types)];

/**
 * The zone as stored: a proper-case IANA name as sent (`Asia/Kolkata`, which ICU would call by
 * its old name `Asia/Calcutta`); otherwise ICU's canonical name (`america/new_york` ->
 * `America/New_York`, `CET` -> `Europe/Brussels`, which PostgreSQL would read as a fixed offset).
 */
function timeZone(name: string): string {
  const canonical = canonicalTimeZone(name);
  const tz =
    canonical &&
    canonical.toLowerCase() !== name.toLowerCase() &&
    /^[A-Z][A-Za-z_+-]*(\/[A-Z][A-Za-z0-9_+-]*)+$/.test(name)
      ? name
      : canonical;
  if (!tz)
    throw ERRORS.validation([
      {
        field: 'time_zone',
        message: `is not an IANA time zone (such as Europe/Berlin or America/New_York): "${name.slice(0, 64)}"`,
      },
    ]);
  return tz;
}

/** Queues the mail with a new code, in the caller's transaction. */
async function queueCode(tx: Queryable, ctx: EmailContext, sub: SubscriptionStateRow, code: string): Promise<void> {
  const id = newId('emsg');
  const url = unsubscribeUrl(ctx.settings, ctx.secrets, sub.id, sub.unsubscribe_nonce);
  const mail = renderConfirmation(code, url);
  await insertMessage(tx, {
    id,
    account_id: sub.account_id,
    subscription_id: sub.id,
    kind: 'confirmation',
    dedupe_key: `confirmation:${id}`,
    recipient: sub.address,
    subject: mail.subject,
    text_body: mail.text,
    html_body: mail.html,
    unsubscribe_url: url,
  });
  await notifyEmailWorkers(tx);
}

/**
 * A new subscription, unconfirmed, and the mail with its code, in one transaction: nothing else
 * is mailed to the address until the code comes back (confirm).
 */
export async function createSubscription(
  ctx: EmailContext,
  accountId: string,
  body: EmailSubscriptionCreate,
): Promise<SubscriptionStateRow> {
  const tz = timeZone(body.time_zone ?? 'UTC');
  if (!ctx.settings.smtpUrl) throw ERRORS.emailDisabled();
  const id = newId('esub');
  const code = EmailSecrets.newCode();
  return ctx.db.transaction(async (tx) => {
    const sub = await insertSubscription(tx, accountId, {
      id,
      address: body.address,
      event_types: distinct(body.event_types ?? DEFAULT_EVENT_TYPES),
      digest: (body.digest ?? 'none') as Digest,
      digest_hour: body.digest_hour ?? DEFAULT_DIGEST_HOUR,
      time_zone: tz,
      enabled: body.enabled ?? true,
      code_hash: ctx.secrets.codeHash(id, code),
      unsubscribe_nonce: EmailSecrets.newNonce(),
    });
    await queueCode(tx, ctx, sub, code);
    return sub;
  });
}

export async function findSubscription(db: Queryable, accountId: string, id: string): Promise<SubscriptionStateRow> {
  const row = await getSubscription(db, accountId, id);
  if (!row) throw ERRORS.notFound('Email subscription');
  return row;
}

const lockedGone = () =>
  ERRORS.gone(
    `Too many wrong codes (${CODE_ATTEMPTS}): this subscription can no longer be confirmed. Delete it and create it again for a new code`,
    [{ field: 'code', message: `${CODE_ATTEMPTS} wrong codes were entered` }],
  );

/**
 * Checks a code (constant time against its stored HMAC). A wrong one counts, committed even
 * though the request fails; the fifth locks the subscription (410 from then on).
 */
export async function confirmSubscription(
  ctx: EmailContext,
  accountId: string,
  id: string,
  code: string,
): Promise<SubscriptionStateRow> {
  const outcome = await ctx.db.transaction(async (tx) => {
    const sub = await getSubscription(tx, accountId, id, true);
    if (!sub) return { kind: 'missing' as const };
    if (sub.locked_at) return { kind: 'locked' as const };
    if (sub.confirmed_at) return { kind: 'confirmed' as const };
    if (!/^\d{6}$/.test(code)) return { kind: 'malformed' as const };
    if (sub.code_hash && ctx.secrets.codeMatches(sub.id, code, sub.code_hash))
      return { kind: 'ok' as const, sub: await markConfirmed(tx, sub.id) };
    const failures = await recordCodeFailure(tx, sub.id, CODE_ATTEMPTS);
    return failures >= CODE_ATTEMPTS
      ? { kind: 'locked' as const }
      : { kind: 'wrong' as const, left: CODE_ATTEMPTS - failures };
  });
  switch (outcome.kind) {
    case 'ok':
      return outcome.sub;
    case 'missing':
      throw ERRORS.notFound('Email subscription');
    case 'locked':
      throw lockedGone();
    case 'confirmed':
      throw ERRORS.conflict('This subscription is already confirmed', [
        { field: 'code', message: 'nothing to confirm' },
      ]);
    case 'malformed':
      throw ERRORS.validation([{ field: 'code', message: 'must be the 6 digits of the code mailed to the address' }]);
    case 'wrong':
      throw ERRORS.validation(
        [
          {
            field: 'code',
            message: `is not the code mailed to the address; ${outcome.left} attempt${outcome.left === 1 ? '' : 's'} left`,
          },
        ],
        'Wrong confirmation code',
      );
  }
}

/**
 * Only the fields sent change. `enabled: false` drops mail not yet sent. `enabled: true` after
 * the unsubscribe link was used starts a new confirmation round: the address said no, so it must
 * say yes again before anything but the code reaches it.
 */
export async function changeSubscription(
  ctx: EmailContext,
  accountId: string,
  id: string,
  body: EmailSubscriptionUpdate,
): Promise<SubscriptionStateRow> {
  const tz = body.time_zone === undefined ? undefined : timeZone(body.time_zone);
  return ctx.db.transaction(async (tx) => {
    const current = await getSubscription(tx, accountId, id, true);
    if (!current) throw ERRORS.notFound('Email subscription');
    const changes: SubscriptionChanges = {
      event_types: body.event_types === undefined ? undefined : distinct(body.event_types),
      digest: body.digest as Digest | undefined,
      digest_hour: body.digest_hour,
      time_zone: tz,
      enabled: body.enabled,
    };
    let code: string | undefined;
    if (body.enabled === true && current.unsubscribed_at) {
      if (!ctx.settings.smtpUrl) throw ERRORS.emailDisabled();
      code = EmailSecrets.newCode();
      changes.reconfirm = { code_hash: ctx.secrets.codeHash(id, code) };
    }
    const row = await updateSubscription(tx, accountId, id, changes);
    if (!row) throw ERRORS.notFound('Email subscription');
    if (body.enabled === false) await dropPendingMail(tx, id);
    if (code) await queueCode(tx, ctx, row, code);
    return row;
  });
}

export async function removeSubscription(db: Database, accountId: string, id: string): Promise<void> {
  if (!(await deleteSubscription(db, accountId, id))) throw ERRORS.notFound('Email subscription');
}

const INVALID_LINK =
  'This unsubscribe link is not valid: it may have been altered or cut short. Use the link of the mail as it is';
/** One message for a used link and a deleted subscription: the answer says nothing of which. */
const USED_LINK =
  'This unsubscribe link has already been used, or its subscription no longer exists: nothing more is mailed through it';

/**
 * The unsubscribe link (no API key): disables the subscription its signed token names, drops
 * its unsent mail and retires the token. An altered token is a 400, a used one a 410; neither
 * answer names the subscription, its address or its account.
 */
export async function unsubscribe(ctx: EmailContext, token: string): Promise<void> {
  const read = ctx.secrets.readToken(token);
  if (!read) throw ERRORS.invalidRequest(INVALID_LINK, [{ field: 's', message: 'is not a token this server issued' }]);
  const done = await ctx.db.transaction(async (tx) => {
    const sub = await getSubscriptionForToken(tx, read.subscriptionId);
    if (!sub || !sameNonce(sub.unsubscribe_nonce, read.nonce)) return false;
    if (!(await markUnsubscribed(tx, sub.id, read.nonce, EmailSecrets.newNonce()))) return false;
    await dropPendingMail(tx, sub.id);
    return true;
  });
  if (!done) throw ERRORS.gone(USED_LINK, [{ field: 's', message: 'has been used' }]);
}
