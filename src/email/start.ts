import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/types.js';
import { startPeriodic } from '../jobs/periodic.js';
import { DAY_MS, HOUR_MS } from '../time.js';
import type { EmailContext } from './service.js';
import { deleteOldMessages, releaseAllMessages } from './sql.js';
import { EmailSecrets } from './tokens.js';
import { composeDigests, composeImmediate, defaultWorkerId, sendDue, smtpTransport } from './worker.js';

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
 * outbox when a NOTIFY says a mail was queued and every few seconds (retries coming due),
 * mails each minute's events once the minute is over, and looks for due digests every minute.
 */
export async function startEmailWork(config: Config, db: Database, deploymentKey: Buffer, log: Logger) {
  if (!config.smtpUrl) return undefined;
  if (db.kind === 'pglite') {
    const released = await releaseAllMessages(db);
    if (released > 0) log.info({ released }, 'released the mails a previous run left claimed');
  }
  const ctx: EmailContext = { db, settings: config, secrets: new EmailSecrets(deploymentKey) };
  const transport = smtpTransport(config.smtpUrl, config.smtpTimeoutMs);
  const workerId = defaultWorkerId();
  const leaseMs = Math.max(60_000, config.smtpTimeoutMs * 4);
  const rules = { schedule: config.emailRetrySchedule, jitter: 0.2 };
  let sending: Promise<unknown> | undefined;
  let again = false;
  let stopped = false;
  const send = () => {
    if (stopped) return;
    if (sending) {
      again = true;
      return;
    }
    sending = (async () => {
      do {
        again = false;
        await sendDue(db, transport, { from: config.mailFrom, workerId, leaseMs, rules, log });
      } while (again && !stopped);
    })()
      .catch((err: unknown) => log.warn({ err, component: 'email' }, 'sending mail failed; will retry'))
      .finally(() => (sending = undefined));
  };
  const unlisten = await db.listen('email_messages', send);
  const tasks = [
    startPeriodic({
      name: 'email-send',
      title: 'sending mail',
      everyMs: SEND_EVERY_MS,
      firstAfterMs: 100,
      run: async () => send(),
      log,
    }),
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
    async stop() {
      stopped = true;
      await unlisten();
      await Promise.all(tasks.map((t) => t.stop()));
      await sending;
      transport.close();
    },
    ready: { email_worker: { id: workerId } },
  };
}
