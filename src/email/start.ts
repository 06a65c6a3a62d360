import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/types.js';
import { ClaimLoop, newWorkerId } from '../jobs/claim-loop.js';
import { startPeriodic } from '../jobs/periodic.js';
import { DAY_MS, HOUR_MS } from '../time.js';
import type { EmailContext } from './service.js';
import { claimMessages, deleteOldMessages, releaseAllMessages, releaseMessages } from './sql.js';
import { EmailSecrets } from './tokens.js';
import { CLAIM_BATCH, composeDigests, composeImmediate, sendClaimed, smtpTransport } from './worker.js';

/** The outbox is looked at this often without a NOTIFY: retries that came due are not announced. */
const SEND_EVERY_MS = 5_000;
const COMPOSE_EVERY_MS = 5_000;
const DIGESTS_EVERY_MS = 60_000;
const PRUNE_EVERY_MS = HOUR_MS;
const PRUNE_BATCH = 1000;

/** Sent and failed mails older than the events' retention go, a batch per statement. */
async function pruneMessages(db: Database, retentionDays: number): Promise<void> {
  const cutoff = new Date(Date.now() - retentionDays * DAY_MS);
  while ((await deleteOldMessages(db, cutoff, PRUNE_BATCH)) === PRUNE_BATCH);
}

/**
 * The `email` task of worker processes (src/jobs/tasks.ts): off without SMTP_URL. Sends the
 * outbox in the claim loop (src/jobs/claim-loop.ts): a batch at a time, woken when a NOTIFY says
 * a mail was queued and every few seconds (retries coming due); mails each minute's events once
 * the minute is over, and looks for due digests every minute.
 */
export async function startEmailWork(config: Config, db: Database, deploymentKey: Buffer, log: Logger) {
  if (!config.smtpUrl) return undefined;
  if (db.kind === 'pglite') {
    const released = await releaseAllMessages(db);
    if (released > 0) log.info({ released }, 'released the mails a previous run left claimed');
  }
  const ctx: EmailContext = { db, settings: config, secrets: new EmailSecrets(deploymentKey) };
  const transport = smtpTransport(config.smtpUrl, config.smtpTimeoutMs);
  const send = { from: config.mailFrom, workerId: newWorkerId(), leaseMs: Math.max(60_000, config.smtpTimeoutMs * 4) };
  const opts = { ...send, rules: { schedule: config.emailRetrySchedule, jitter: 0.2 }, log };
  /** The batch being sent: one at a time, in claim order. */
  let sending: Promise<void> | undefined;
  const giveBack = async (ids: string[]) => {
    const n = await releaseMessages(db, send.workerId, ids).catch((err: unknown) => {
      log.warn({ err, component: 'email' }, 'could not give back the mails not sent; their leases will expire');
      return 0;
    });
    if (n > 0) log.info({ released: n, component: 'email' }, 'email worker stopping: gave back the mails not sent');
  };
  const loop: ClaimLoop = new ClaimLoop({
    db,
    channel: 'email_messages',
    room: () => (sending ? 0 : CLAIM_BATCH),
    async claim(free) {
      const batch = await claimMessages(db, send.workerId, send.leaseMs, free);
      if (loop.stopping) {
        await giveBack(batch.map((m) => m.id));
        return { claimed: 0 };
      }
      if (batch.length > 0) {
        sending = sendClaimed(db, transport, batch, opts, () => loop.stopping)
          .then(async (done) => {
            const sent = new Set(done.map((o) => o.id));
            await giveBack(batch.filter((m) => !sent.has(m.id)).map((m) => m.id));
          })
          .catch((err: unknown) => log.warn({ err, component: 'email' }, 'sending mail failed; will retry'))
          .finally(() => {
            sending = undefined;
            loop.wake();
          });
      }
      // A full batch: claimed again as soon as it is sent (ClaimLoop's `more`).
      return { claimed: batch.length, wakeAt: Date.now() + SEND_EVERY_MS };
    },
    onError: (err) => log.warn({ err, component: 'email' }, 'sending mail failed; will retry'),
    // A failed claim is retried at least as often as the outbox is looked at anyway.
    retryMaxMs: SEND_EVERY_MS,
  });
  await loop.start();
  const tasks = [
    startPeriodic({
      name: 'email-compose',
      title: 'making immediate mails',
      everyMs: COMPOSE_EVERY_MS,
      run: () => composeImmediate(ctx),
      log,
    }),
    startPeriodic({
      name: 'email-digests',
      title: 'making digests',
      everyMs: DIGESTS_EVERY_MS,
      firstAfterMs: 5_000,
      run: () => composeDigests(ctx),
      log,
    }),
    startPeriodic({
      name: 'email-prune',
      title: 'pruning sent mail',
      everyMs: PRUNE_EVERY_MS,
      firstAfterMs: 60_000,
      run: () => pruneMessages(db, config.eventRetentionDays),
      log,
    }),
  ];
  return {
    /**
     * No more claims; the mail being sent finishes (the rest of its batch is given back), for up to
     * `graceMs`: then the connection is closed, which fails that attempt (retried on schedule).
     */
    async stop(graceMs: number = Infinity) {
      await loop.stop();
      await Promise.all(tasks.map((t) => t.stop()));
      const inFlight = sending;
      if (inFlight) {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await Promise.race([
          inFlight.then(() => false),
          new Promise<boolean>((resolve) => {
            if (Number.isFinite(graceMs)) timer = setTimeout(() => resolve(true), graceMs);
          }),
        ]);
        clearTimeout(timer);
        if (timedOut) {
          log.warn({ component: 'email', grace_ms: graceMs }, 'email worker stopping: abandoning the mail being sent');
          transport.close();
        }
        await inFlight;
      }
      transport.close();
    },
    ready: { email_worker: { id: send.workerId } },
  };
}
