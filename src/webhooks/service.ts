import type { Database } from '../db/types.js';
import { recordEvent } from '../events/service.js';
import type { Event } from '../events/schemas.js';
import {
  addressPolicy,
  type AddressPolicy,
  type LookupAll,
  resolveAllowedAddresses,
  systemLookup,
} from '../fetcher/address-guard.js';
import { FetchError } from '../fetcher/types.js';
import { acceptPageUrl, urlPort } from '../fetcher/url-policy.js';
import { ERRORS } from '../http/errors.js';
import { iso } from '../http/fields.js';
import { newId } from '../ids.js';
import {
  REDELIVER_RANGE_MAX_DAYS,
  type Redeliver,
  type RotateSecret,
  type WebhookCreate,
  type WebhookUpdate,
} from './schemas.js';
import { newSecret } from './secrets.js';
import {
  deleteWebhook,
  getWebhook,
  insertDelivery,
  insertWebhook,
  notifyDeliveryWorkers,
  queueFailedRedeliveries,
  queueRedelivery,
  rotateWebhookSecret,
  updateWebhook,
  type WebhookChanges,
  type WebhookRow,
  type WebhookSecretRow,
} from './sql.js';
import { DAY_MS } from '../time.js';

/** What the webhooks API needs of the deployment's settings (src/config.ts). */
export interface WebhookSettings {
  /** ALLOW_LOOPBACK_TARGETS: 127.0.0.1 and ::1 may be endpoints (tests). */
  allowLoopbackTargets: boolean;
  /** Single loopback `address:port` targets (the demo's shop). */
  allowTargets?: readonly string[];
  /** WEBHOOK_SECRET_OVERLAP: how long a rotated-out secret keeps signing, in ms. */
  webhookSecretOverlapMs: number;
}

const LOOKUP_TIMEOUT_MS = 3000;

/** The system resolver, given up on after a few seconds (a slow DNS must not hold a request). */
const timedLookup: LookupAll = (hostname) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(Object.assign(new Error('DNS timeout'), { code: 'EAI_AGAIN' })),
      LOOKUP_TIMEOUT_MS,
    );
    systemLookup(hostname).then(
      (found) => {
        clearTimeout(timer);
        resolve(found);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err as Error);
      },
    );
  });

/**
 * Why an endpoint URL is refused, or undefined: the URL policy and the address guard of page
 * fetches (src/fetcher). A name that does not resolve now is accepted (DNS may come later); the
 * guard runs again before every delivery, so a name that later resolves to a private address
 * still receives nothing.
 */
export async function endpointUrlProblem(
  raw: string,
  policy: AddressPolicy,
  lookup: LookupAll = timedLookup,
): Promise<string | undefined> {
  try {
    const u = acceptPageUrl(raw);
    await resolveAllowedAddresses(u.hostname, { ...policy, lookup }, urlPort(u));
    return undefined;
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    if (err.code === 'dns_failed') return undefined;
    return err.message;
  }
}

async function checkUrl(url: string, settings: WebhookSettings): Promise<void> {
  const problem = await endpointUrlProblem(url, addressPolicy(settings));
  if (problem) throw ERRORS.validation([{ field: 'url', message: problem }]);
}

const distinct = (types: readonly string[]) => [...new Set(types)];

export async function createWebhook(
  db: Database,
  settings: WebhookSettings,
  accountId: string,
  body: WebhookCreate,
): Promise<WebhookSecretRow> {
  await checkUrl(body.url, settings);
  return insertWebhook(db, accountId, {
    id: newId('wh'),
    url: body.url,
    description: body.description ?? null,
    event_types: distinct(body.event_types ?? []),
    format: (body.format ?? 'standard') as WebhookSecretRow['format'],
    enabled: body.enabled ?? true,
    secret: newSecret(),
  });
}

export async function findWebhook(db: Database, accountId: string, id: string): Promise<WebhookRow> {
  const row = await getWebhook(db, accountId, id);
  if (!row) throw ERRORS.notFound('Webhook');
  return row;
}

export async function changeWebhook(
  db: Database,
  settings: WebhookSettings,
  accountId: string,
  id: string,
  body: WebhookUpdate,
): Promise<WebhookRow> {
  if (body.url !== undefined) {
    // Another account's endpoint is a 404 whatever the URL says.
    await findWebhook(db, accountId, id);
    await checkUrl(body.url, settings);
  }
  const changes: WebhookChanges = {
    ...body,
    format: body.format as WebhookChanges['format'],
    event_types: body.event_types === undefined ? undefined : distinct(body.event_types),
  };
  const row = await updateWebhook(db, accountId, id, changes);
  if (!row) throw ERRORS.notFound('Webhook');
  return row;
}

export async function removeWebhook(db: Database, accountId: string, id: string): Promise<void> {
  if (!(await deleteWebhook(db, accountId, id))) throw ERRORS.notFound('Webhook');
}

/**
 * A new secret. The previous one keeps signing beside it for the deployment's overlap, or for
 * `expire_previous_in_seconds` when that is shorter (0: it stops at once); longer is a 422.
 */
export async function rotateSecret(
  db: Database,
  settings: WebhookSettings,
  accountId: string,
  id: string,
  body: RotateSecret,
): Promise<WebhookSecretRow> {
  const maxSeconds = Math.floor(settings.webhookSecretOverlapMs / 1000);
  const seconds = body.expire_previous_in_seconds;
  if (seconds !== undefined && seconds > maxSeconds) {
    await findWebhook(db, accountId, id);
    throw ERRORS.validation([
      {
        field: 'expire_previous_in_seconds',
        message: `must be at most ${maxSeconds} (the overlap this deployment allows, WEBHOOK_SECRET_OVERLAP)`,
      },
    ]);
  }
  const overlapMs = seconds === undefined ? settings.webhookSecretOverlapMs : seconds * 1000;
  const row = await rotateWebhookSecret(db, accountId, id, newSecret(), overlapMs);
  if (!row) throw ERRORS.notFound('Webhook');
  return row;
}

/** Nothing is sent to a disabled endpoint, so nothing is queued for one either. */
const disabledConflict = (doing: string) =>
  ERRORS.conflict(`The endpoint is disabled: enable it (PATCH {"enabled": true}) before ${doing}`, [
    { field: 'enabled', message: 'is false' },
  ]);

const TEST_MESSAGE = 'A test event from pricehound: if you can read this, your endpoint receives our webhooks.';

/**
 * Records a `webhook.test` event and queues it for this endpoint only (the fan-out trigger skips
 * the type on purpose), in one transaction that wakes the delivery workers when it commits.
 */
export async function sendTestEvent(db: Database, accountId: string, id: string, message?: string): Promise<Event> {
  return db.transaction(async (tx) => {
    const hook = await getWebhook(tx, accountId, id);
    if (!hook) throw ERRORS.notFound('Webhook');
    if (!hook.enabled) throw disabledConflict('sending a test');
    const event = await recordEvent(tx, accountId, 'webhook.test', {
      object: 'webhook_test',
      webhook_id: id,
      message: message ?? TEST_MESSAGE,
    });
    await insertDelivery(tx, accountId, id, newId('whdl'), event.id);
    await notifyDeliveryWorkers(tx);
    return { id: event.id, type: event.type, created_at: iso(event.created_at), data: event.data };
  });
}

function redeliverForm(body: Redeliver): { eventId: string } | { since: string; until: string } {
  const hasEvent = body.event_id !== undefined;
  const hasRange = body.since !== undefined || body.until !== undefined;
  if (hasEvent === hasRange) {
    const message = hasEvent ? 'give either event_id or since and until, not both' : 'is required (or since and until)';
    throw ERRORS.validation(
      [{ field: 'event_id', message }],
      'Send either {"event_id": ...} or {"since": ..., "until": ...}',
    );
  }
  if (hasEvent) return { eventId: body.event_id! };
  if (body.since === undefined) throw ERRORS.validation([{ field: 'since', message: 'is required with until' }]);
  if (body.until === undefined) throw ERRORS.validation([{ field: 'until', message: 'is required with since' }]);
  const since = Date.parse(body.since);
  const until = Date.parse(body.until);
  if (since >= until) throw ERRORS.validation([{ field: 'since', message: 'must be before until' }]);
  if (until - since > REDELIVER_RANGE_MAX_DAYS * DAY_MS) {
    throw ERRORS.validation([
      { field: 'until', message: `must be at most ${REDELIVER_RANGE_MAX_DAYS} days after since` },
    ]);
  }
  return { since: body.since, until: body.until };
}

/**
 * Queues manual attempts (POST /webhooks/{id}/redeliver): of one event of the account, or of
 * every event in a range whose latest attempt to this endpoint failed. One transaction; the
 * workers are woken when it commits. Returns how many were queued.
 */
export async function redeliver(db: Database, accountId: string, id: string, body: Redeliver): Promise<number> {
  const form = redeliverForm(body);
  return db.transaction(async (tx) => {
    const hook = await getWebhook(tx, accountId, id);
    if (!hook) throw ERRORS.notFound('Webhook');
    if (!hook.enabled) throw disabledConflict('redelivering');
    let queued: number;
    if ('eventId' in form) {
      if (!(await queueRedelivery(tx, accountId, id, form.eventId)))
        throw ERRORS.notFound('Event', [{ field: 'event_id', message: 'is not an event of this account' }]);
      queued = 1;
    } else {
      queued = await queueFailedRedeliveries(tx, accountId, id, form.since, form.until);
    }
    if (queued > 0) await notifyDeliveryWorkers(tx);
    return queued;
  });
}
