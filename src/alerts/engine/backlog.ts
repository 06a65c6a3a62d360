import crypto from 'node:crypto';
import type { Logger } from 'pino';
import { bulkReader, type Database } from '../../db/types.js';
import { applyRules, readPoints } from './live.js';
import { deleteBacklog, holdsBacklog, leaseBacklog, loadEnabledRules } from './sql.js';

/** NOTIFY channel of migrations/0007: "a batch was queued". */
export const BACKLOG_CHANNEL = 'alert_backlog';
/** After a failed evaluation the loop waits this long (doubling, up to a minute) before trying again. */
const RETRY_MS = 1_000;

/** How long a worker holds a batch it evaluates; one that dies leaves it to another after this. */
const LEASE_MS = 60_000;

/** This process's name on the batches it holds. */
const WORKER = `alerts-${crypto.randomBytes(6).toString('hex')}`;

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
      await applyRules(tx, batch.account_id, now, same ? points : await readPoints(tx, batch.account_id, now, batch.observation_ids));
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
 * batch was queued (and once at start, for what was queued while no worker ran). One batch per
 * transaction, so a PGlite process serves requests between them.
 */
export async function startAlertBacklog(db: Database, log: Logger): Promise<{ stop(): Promise<void> }> {
  let wanted = true;
  let stopped = false;
  let wake: (() => void) | undefined;
  const poke = () => {
    wanted = true;
    wake?.();
  };
  const unlisten = await db.listen(BACKLOG_CHANNEL, poke, poke);
  const loop = (async () => {
    let failures = 0;
    while (!stopped) {
      if (!wanted) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      wanted = false;
      try {
        while (!stopped && (await evaluateOneQueued(db)));
        failures = 0;
      } catch (err) {
        // A batch that cannot be evaluated stays queued (its account's alerts wait behind it)
        // and is tried again, less and less often, so the error is in the log, not lost.
        failures++;
        log.error({ err }, 'alert evaluation of a queued batch failed');
        const delay = Math.min(60_000, RETRY_MS * 2 ** Math.min(failures - 1, 6));
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
        wanted = true;
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await unlisten().catch(() => undefined);
    },
  };
}
