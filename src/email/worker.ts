import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Database } from '../db/types.js';
import { newId } from '../ids.js';
import { renderDigest, renderEvents } from './render.js';
import { type EmailContext, unsubscribeUrl } from './service.js';
import {
  claimMessages,
  DIGEST_KINDS,
  digestEvents,
  dueDigests,
  dueMinuteGroups,
  getSubscription,
  insertMessage,
  markAttemptFailed,
  markDigestThrough,
  markSent,
  type MessageRow,
  notifyEmailWorkers,
  takeMinuteGroup,
} from './sql.js';

/**
 * The email worker (docs/EMAIL.md, "Sending"): makes the immediate mails of each finished
 * minute and the digests that are due, into the mail outbox (email_messages), and sends that
 * outbox over SMTP. Every step is a short transaction; several workers share the work (FOR
 * UPDATE SKIP LOCKED, and a unique key per mail so that no mail is made twice).
 */

const GROUPS_PER_RUN = 200;
const DIGESTS_PER_RUN = 200;
const DIGEST_LIST_MAX = 50;
/** Mails claimed at once (a claim of the worker's loop, a round of sendDue). */
export const CLAIM_BATCH = 10;

/**
 * Mails the events of every (subscription, minute) whose minute ended before `now`: one mail
 * per group, made in the transaction that takes the group's events off the queue. Returns how
 * many mails were made.
 */
export async function composeImmediate(ctx: EmailContext, now: Date = new Date()): Promise<number> {
  let made = 0;
  for (;;) {
    const groups = await dueMinuteGroups(ctx.db, now, GROUPS_PER_RUN);
    for (const g of groups) {
      const ok = await ctx.db.transaction(async (tx) => {
        const events = await takeMinuteGroup(tx, g.subscription_id, g.minute);
        if (events.length === 0) return false;
        const sub = await getSubscriptionById(tx, g.subscription_id);
        if (!sub || !sub.enabled || !sub.confirmed_at) return false;
        const url = unsubscribeUrl(ctx.settings, ctx.secrets, sub.id, sub.unsubscribe_nonce);
        const mail = renderEvents(events, url);
        const inserted = await insertMessage(tx, {
          id: newId('emsg'),
          account_id: sub.account_id,
          subscription_id: sub.id,
          kind: 'events',
          dedupe_key: `events:${sub.id}:${g.minute.toISOString()}`,
          recipient: sub.address,
          subject: mail.subject,
          text_body: mail.text,
          html_body: mail.html,
          unsubscribe_url: url,
        });
        if (inserted) await notifyEmailWorkers(tx);
        return inserted;
      });
      if (ok) made++;
    }
    if (groups.length < GROUPS_PER_RUN) return made;
  }
}

async function getSubscriptionById(tx: Parameters<typeof getSubscription>[0], id: string) {
  const r = await tx.query<{ account_id: string }>(
    '/* emailSubscriptionAccount */ select account_id from email_subscriptions where id = $1',
    [id],
  );
  const accountId = r.rows[0]?.account_id;
  return accountId === undefined ? undefined : getSubscription(tx, accountId, id);
}

/**
 * Makes every digest due at `now` (its period ended at its hour in its time zone and was not
 * mailed yet): the period's alert events, price changes and failing listings, each list capped
 * at 50 with the count of the rest. The mail and the subscription's `digest_through` commit
 * together. Returns how many were made.
 */
export async function composeDigests(ctx: EmailContext, now: Date = new Date()): Promise<number> {
  let made = 0;
  for (;;) {
    const due = await dueDigests(ctx.db, now, DIGESTS_PER_RUN);
    for (const d of due) {
      const ok = await ctx.db.transaction(async (tx) => {
        if (!(await markDigestThrough(tx, d.id, d.period_end))) return false;
        const lists = {} as Record<keyof typeof DIGEST_KINDS, Awaited<ReturnType<typeof digestEvents>>>;
        for (const kind of Object.keys(DIGEST_KINDS) as (keyof typeof DIGEST_KINDS)[]) {
          lists[kind] = await digestEvents(
            tx,
            d.account_id,
            DIGEST_KINDS[kind],
            d.period_start,
            d.period_end,
            DIGEST_LIST_MAX,
          );
        }
        const url = unsubscribeUrl(ctx.settings, ctx.secrets, d.id, d.unsubscribe_nonce);
        const mail = renderDigest(
          {
            label: d.digest === 'weekly' ? 'weekly' : 'daily',
            period: `${d.local_start} to ${d.local_end} ${d.time_zone}`,
            alerts: lists.alerts.events,
            priceChanges: lists.priceChanges.events,
            failures: lists.failures.events,
            more: {
              alerts: lists.alerts.total - lists.alerts.events.length,
              priceChanges: lists.priceChanges.total - lists.priceChanges.events.length,
              failures: lists.failures.total - lists.failures.events.length,
            },
          },
          url,
        );
        await insertMessage(tx, {
          id: newId('emsg'),
          account_id: d.account_id,
          subscription_id: d.id,
          kind: 'digest',
          dedupe_key: `digest:${d.id}:${new Date(d.period_end).toISOString()}`,
          recipient: d.address,
          subject: mail.subject,
          text_body: mail.text,
          html_body: mail.html,
          unsubscribe_url: url,
        });
        await notifyEmailWorkers(tx);
        return true;
      });
      if (ok) made++;
    }
    if (due.length < DIGESTS_PER_RUN) return made;
  }
}

/** How a mail goes out: nodemailer's SMTP transport (tests may pass another transporter). */
export function smtpTransport(smtpUrl: string, timeoutMs: number): Transporter {
  return nodemailer.createTransport(smtpUrl, {
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    // Headers are ours; nodemailer must not add an X-Mailer naming the library's version.
    disableFileAccess: true,
    disableUrlAccess: true,
  } as never);
}

export interface SendRules {
  /** Waits before each retry (EMAIL_RETRY_SCHEDULE); its length is the number of retries. */
  schedule: readonly number[];
  /** Up to this fraction of each wait is added at random. */
  jitter: number;
}

/** The Message-ID of a mail: the same on every attempt, so a receiver can drop a repeat. */
export const messageIdOf = (id: string, from: string) => {
  const domain = /@([^@>\s]+)>?\s*$/.exec(from)?.[1] ?? 'pricehound.invalid';
  return `<${id}@${domain}>`;
};

function retryIn(attempts: number, rules: SendRules): number | null {
  const wait = rules.schedule[attempts - 1];
  if (wait === undefined) return null;
  return Math.round(wait * (1 + Math.random() * rules.jitter));
}

export interface SendOutcome {
  id: string;
  subscription_id: string;
  attempts: number;
  sent: boolean;
  error?: string;
}

/** One mail over SMTP, with both parts and the List-Unsubscribe headers (RFC 2369, RFC 8058). */
export async function sendMessage(transport: Transporter, from: string, m: MessageRow): Promise<void> {
  await transport.sendMail({
    from,
    to: m.recipient,
    subject: m.subject,
    text: m.text_body,
    html: m.html_body,
    messageId: messageIdOf(m.id, from),
    headers: {
      'X-Pricehound-Message': m.id,
      'Auto-Submitted': 'auto-generated',
      ...(m.unsubscribe_url ? { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } : {}),
    },
    ...(m.unsubscribe_url ? { list: { unsubscribe: { url: m.unsubscribe_url, comment: 'Unsubscribe' } } } : {}),
  });
}

export interface SendOptions {
  from: string;
  workerId: string;
  leaseMs: number;
  rules: SendRules;
  log?: Pick<Logger, 'warn' | 'info'>;
  onSent?: (o: SendOutcome) => void;
}

/**
 * Sends mails this worker claimed, in order, recording each outcome: a mail whose attempt fails
 * is due again after the schedule's next wait, and `failed` after the last. Once `stopping()`
 * says so it sends no further mail; the caller gives back the rest (releaseMessages).
 */
export async function sendClaimed(
  db: Database,
  transport: Transporter,
  batch: readonly MessageRow[],
  opts: SendOptions,
  stopping: () => boolean = () => false,
): Promise<SendOutcome[]> {
  const out: SendOutcome[] = [];
  for (const m of batch) {
    if (stopping()) break;
    let outcome: SendOutcome;
    try {
      await sendMessage(transport, opts.from, m);
      await markSent(db, m.id, opts.workerId);
      outcome = { id: m.id, subscription_id: m.subscription_id, attempts: m.attempts, sent: true };
    } catch (err) {
      const e = err as Error & { responseCode?: number; response?: string };
      const error = e.response ?? e.message ?? String(err);
      const wait = retryIn(m.attempts, opts.rules);
      await markAttemptFailed(db, m.id, opts.workerId, error, wait);
      opts.log?.warn(
        { component: 'email', message_id: m.id, attempts: m.attempts, error, retry_in_ms: wait },
        wait === null ? 'mail failed for good' : 'mail not accepted; will retry',
      );
      outcome = { id: m.id, subscription_id: m.subscription_id, attempts: m.attempts, sent: false, error };
    }
    out.push(outcome);
    opts.onSent?.(outcome);
  }
  return out;
}

/**
 * Claims due mails and sends them until none is due; returns what happened to each (tests and
 * support: the worker claims in its loop instead, src/email/start.ts).
 */
export async function sendDue(db: Database, transport: Transporter, opts: SendOptions): Promise<SendOutcome[]> {
  const out: SendOutcome[] = [];
  for (;;) {
    const batch = await claimMessages(db, opts.workerId, opts.leaseMs, CLAIM_BATCH);
    out.push(...(await sendClaimed(db, transport, batch, opts)));
    if (batch.length < CLAIM_BATCH) return out;
  }
}
