import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Database } from '../../db/types.js';
import { addressPolicy } from '../../fetcher/address-guard.js';
import { WebhookSender } from './send.js';
import { releaseAllEndpoints } from './sql.js';
import { DeliveryWorker } from './worker.js';

/** The delivery worker of a process, built from its configuration (the `webhook-deliveries` task of src/jobs/tasks.ts). */
export function createDeliveryWorker(
  config: Config,
  db: Database,
  log: Logger,
  opts: { workerId?: string } = {},
): { worker: DeliveryWorker; sender: WebhookSender } {
  const sender = new WebhookSender({ ...addressPolicy(config), timeoutMs: config.webhookTimeoutMs });
  const worker = new DeliveryWorker({
    db,
    sender,
    log,
    concurrency: config.webhookConcurrency,
    timeoutMs: config.webhookTimeoutMs,
    userAgent: config.userAgent,
    rules: {
      schedule: config.webhookRetrySchedule,
      jitter: config.webhookRetryJitter,
      disableAfterMs: config.webhookDisableAfterMs,
    },
    ...opts,
  });
  return { worker, sender };
}

export async function startDeliveryWorker(config: Config, db: Database, log: Logger) {
  // The embedded database has one owner, us: a lease found now was left by a run that died.
  if (db.kind === 'pglite') {
    const released = await releaseAllEndpoints(db);
    if (released > 0) log.info({ released }, 'released the webhook endpoints a previous run left behind');
  }
  const { worker, sender } = createDeliveryWorker(config, db, log);
  await worker.start();
  return {
    async stop(graceMs: number) {
      await worker.stop(graceMs);
      await sender.close();
    },
    ready: { webhook_worker: { id: worker.id, concurrency: worker.concurrency } },
  };
}
