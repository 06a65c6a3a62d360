import type { Logger } from 'pino';
import { bulkReader, type Database } from '../../db/types.js';
import { ClaimLoop, newWorkerId } from '../../jobs/claim-loop.js';
import { applyRules, readPoints } from './live.js';
import { deleteBacklog, holdsBacklog, leaseBacklog, loadEnabledRules } from './sql.js';

/** NOTIFY channel of migrations/0007: "a batch was queued". */
export const BACKLOG_CHANNEL = 'alert_backlog';
/** After a failed evaluation the loop waits this long (doubling, up to a minute) before trying again. */
const RETRY_MS = 1_000;

/** How long a worker holds a batch it evaluates; one that dies leaves it to another after this. */
const LEASE_MS = 60_000;

/** This process's name on the batches it holds (host:pid:random, as the other queues' workers). */
const WORKER = newWorkerId();

/**
 * Evaluates one queued batch (alert_backlog: ALERT_INLINE_MAX, live.ts) and deletes it in the
 * transaction that records its firings and states: each batch is evaluated exactly once,
 * whichever worker takes it and whenever one dies. The batch is taken with a lease and read
 * before that transaction, in slices (through the bulk lane: the embedded engine serves other
 * requests between them), so the transaction only writes. Returns false when nothing was waiting.
 */
export async function evaluateOneQueued(db: Database): Promise<boolean> {
  const batch = await leaseBacklog(db, WORKER, LEASE_MS);
  if (!batch) return false;
  const reader = bulkReader(db);
  const rules = await loadEnabledRules(reader, batch.account_id);
  const points = rules.length > 0 ? await readPoints(reader, batch.account_id, rules, batch.observation_ids) : [];
  await db.transaction(async (tx) => {
    // Taken over after the lease ran out: the other worker evaluates it.
    if (!(await holdsBacklog(tx, batch.id, WORKER))) return;
    // Rules changed while the batch was read: judged by the rules enabled now, read again with them.
    const now = await loadEnabledRules(tx, batch.account_id);
    if (now.length > 0) {
      const same = JSON.stringify(now) === JSON.stringify(rules);
      await applyRules(
        tx,
        batch.account_id,
        now,
        same ? points : await readPoints(tx, batch.account_id, now, batch.observation_ids),
      );
    }
    await deleteBacklog(tx, batch.id);
  });
  return true;
}

/** Evaluates queued batches until none is waiting; returns how many it evaluated. */
export async function drainAlertBacklog(db: Database): Promise<number> {
  let n = 0;
  while (await evaluateOneQueued(db)) n++;
  return n;
}

/**
 * The `alert-backlog` task of src/jobs/tasks.ts: drains the backlog whenever a NOTIFY says a
 * batch was queued (and once at start, for what was queued while no worker ran), in the claim
 * loop of src/jobs/claim-loop.ts. One batch per transaction, so a PGlite process serves requests
 * between them.
 */
export async function startAlertBacklog(db: Database, log: Logger): Promise<{ stop(): Promise<void> }> {
  const claims: ClaimLoop = new ClaimLoop({
    db,
    channel: BACKLOG_CHANNEL,
    // One batch at a time; a poke during a drain drains again after it.
    room: () => 1,
    async claim() {
      while (!claims.stopping && (await evaluateOneQueued(db)));
      return { claimed: 0 };
    },
    // A batch that cannot be evaluated stays queued (its account's alerts wait behind it) and is
    // tried again, less and less often, so the error is in the log, not lost.
    onError: (err) => log.error({ err }, 'alert evaluation of a queued batch failed'),
    retryMs: RETRY_MS,
    retryMaxMs: 60_000,
  });
  await claims.start();
  return { stop: () => claims.stop() };
}
