import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { Database } from '../db/types.js';
import type { Fetcher } from '../fetcher/types.js';
import { type ClaimResult, ClaimLoop, newWorkerId } from '../jobs/claim-loop.js';
import type { Extractor } from './extractor.js';
import {
  type CheckTarget,
  claimDueListings,
  LISTINGS_DUE_CHANNEL,
  releaseLeases,
  renewLeases,
} from './listing-leases.js';
import { CheckAbortedError, type CheckEngine, type CheckOutcome, runCheck } from './run-check.js';
import type { RecordedCheck } from './sql.js';
import { outcomeOf } from './schemas.js';

export interface CheckWorkerOptions {
  db: Database;
  fetcher: Fetcher;
  extractor: Extractor;
  log: Logger;
  /** Checks in flight at once (WORKER_CONCURRENCY). */
  concurrency: number;
  /** How often an idle worker looks for due listings, in ms. NOTIFY wakes it sooner. */
  pollIntervalMs?: number;
  /** How long a claim holds a listing, in s; renewed every third of it while the check runs. */
  leaseSeconds?: number;
  /** Defaults to host:pid:random. */
  workerId?: string;
}

/** Emitted after every check this worker ran. */
export interface CheckFinished {
  listingId: string;
  outcome: CheckOutcome;
  /** The recorded row with the listing's new status; null when the lease was lost (nothing recorded). */
  row: RecordedCheck | null;
}

interface WorkerEvents {
  /** A check finished and was recorded (or found its lease lost). */
  checked: [CheckFinished];
  /** A claim took these listings. */
  claimed: [string[]];
  /** A claim found nothing due and no check is running. */
  idle: [];
  /** Leases of running checks were renewed: the ids still held. */
  renewed: [string[]];
  /** A check or a claim failed on the database (logged too); the worker carries on. */
  error: [Error];
}

interface RunningCheck {
  abort: AbortController;
  /** Past the fetch: the outcome is being written (aborting would change nothing). */
  recording: boolean;
  done: Promise<void>;
}

export const DEFAULT_POLL_INTERVAL_MS = 1_000;
export const DEFAULT_LEASE_SECONDS = 60;

/**
 * Runs scheduled checks: claims due listings (src/checks/listing-leases.ts) up to `concurrency` at a time,
 * runs each (src/checks/run-check.ts) and claims again as slots free up.
 *
 * The claiming is src/jobs/claim-loop.ts's (listen-and-poke, sleep and wake, backoff after a
 * failed claim). Wake-ups: after a claim that filled every free slot there may be more due, so the worker
 * claims again as soon as a quarter of its slots are free (or none is busy): a claim costs
 * PostgreSQL ~0.4 ms of CPU whatever it takes, so claiming one listing per finished check
 * spent more on claims than on recording (bench/checks.ts: 0.5 ms less database CPU per check
 * and ~30% more checks/s with batches of 4 at WORKER_CONCURRENCY 16). Otherwise the worker
 * sleeps until the next poll (one cheap index probe per interval while idle, and a claim of
 * whatever is free) or a NOTIFY on LISTINGS_DUE_CHANNEL.
 *
 * Leases: every third of the lease, the leases of running checks are renewed in one statement;
 * a check whose lease was taken over meanwhile is aborted (its result would not be recorded).
 *
 * stop(): no more claims; running checks get `graceMs` to finish and be recorded, the rest are
 * aborted and their listings given back due at once for another worker.
 */
export class CheckWorker extends EventEmitter<WorkerEvents> {
  readonly id: string;
  readonly concurrency: number;
  private readonly db: Database;
  private readonly engine: CheckEngine & { db: Database };
  private readonly log: Logger;
  private readonly pollIntervalMs: number;
  private readonly leaseSeconds: number;
  private readonly running = new Map<string, RunningCheck>();
  private readonly claims: ClaimLoop;
  private started = false;
  private stopped: Promise<void> | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  /** Free slots that make a claim worth its statement while checks still run. */
  private readonly claimBatch: number;

  constructor(opts: CheckWorkerOptions) {
    super();
    this.db = opts.db;
    this.engine = { db: opts.db, fetcher: opts.fetcher, extractor: opts.extractor };
    this.log = opts.log;
    this.concurrency = opts.concurrency;
    this.pollIntervalMs = opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.leaseSeconds = opts.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    this.claimBatch = Math.max(1, Math.ceil(this.concurrency / 4));
    this.id = opts.workerId ?? newWorkerId();
    this.claims = new ClaimLoop({
      db: this.db,
      channel: LISTINGS_DUE_CHANNEL,
      room: () => this.concurrency - this.running.size,
      // More due: claim once a batch of slots is free (or nothing runs); a poke claims whatever is free.
      eager: (free) => free >= this.claimBatch || this.running.size === 0,
      claim: (free) => this.claim(free),
      onError: (err) => {
        this.log.warn({ err, worker_id: this.id }, 'claiming due listings failed; will retry');
        this.emit('error', err as Error);
      },
    });
    // 'error' without a listener would throw; the log already has it.
    this.on('error', () => undefined);
  }

  /** Checks running now. */
  get inFlight(): number {
    return this.running.size;
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.claims.start();
    const renewEvery = Math.max(100, (this.leaseSeconds * 1000) / 3);
    this.renewTimer = setInterval(() => void this.renew(), renewEvery);
    this.renewTimer.unref();
  }

  /** Look for due listings now (what a NOTIFY does). */
  poke(): void {
    this.claims.poke();
  }

  /** One claim of the loop: the next poll is an interval later (a NOTIFY comes sooner). */
  private async claim(free: number): Promise<ClaimResult> {
    const claimed = await claimDueListings(this.db, this.id, free, this.leaseSeconds);
    if (this.claims.stopping) {
      // Claimed while stop() was called: hand these straight back (not the running ones).
      await releaseLeases(
        this.db,
        this.id,
        claimed.map((l) => l.id),
      ).catch(() => undefined);
      return { claimed: 0 };
    }
    for (const target of claimed) this.startCheck(target);
    if (claimed.length > 0)
      this.emit(
        'claimed',
        claimed.map((l) => l.id),
      );
    if (claimed.length === 0 && this.running.size === 0) this.emit('idle');
    return { claimed: claimed.length, wakeAt: Date.now() + this.pollIntervalMs };
  }

  private startCheck(target: CheckTarget): void {
    const entry: RunningCheck = { abort: new AbortController(), recording: false, done: Promise.resolve() };
    const run = async () => {
      const { outcome, row } = await runCheck(this.engine, target, this.id, this.log, {
        signal: entry.abort.signal,
        onRecording: () => (entry.recording = true),
      });
      if (!row) {
        // Taken over, or deleted or re-pointed meanwhile: runCheck gave it back.
        this.log.info(
          { listing_id: target.id, worker_id: this.id },
          'listing changed or taken over during its check; result discarded',
        );
      }
      this.log.debug(
        {
          listing_id: target.id,
          ok: outcome.ok,
          outcome: row ? outcomeOf(row) : null,
          error_code: outcome.error?.code,
          ms: outcome.durationMs,
          status: row?.listing_status,
        },
        'check finished',
      );
      this.emit('checked', { listingId: target.id, outcome, row });
    };
    entry.done = run()
      .catch((err: unknown) => {
        if (err instanceof CheckAbortedError) return;
        // Recording failed (database down): the lease expires and another claim retries it.
        this.log.error(
          { err, listing_id: target.id },
          'recording a check failed; it will be retried when its lease expires',
        );
        this.emit('error', err as Error);
      })
      .finally(() => {
        this.running.delete(target.id);
        this.claims.wake();
      });
    this.running.set(target.id, entry);
  }

  private async renew(): Promise<void> {
    const ids = [...this.running.keys()];
    if (ids.length === 0) return;
    try {
      const stillHeld = await renewLeases(this.db, this.id, ids, this.leaseSeconds);
      const held = new Set(stillHeld);
      for (const id of ids) {
        // Finished meanwhile (and recorded, which cleared the lock), or taken over.
        const entry = this.running.get(id);
        if (entry && !entry.recording && !held.has(id)) {
          this.log.warn(
            { listing_id: id, worker_id: this.id },
            'lease taken over by another worker; abandoning the check',
          );
          entry.abort.abort();
        }
      }
      this.emit('renewed', stillHeld);
    } catch (err) {
      this.log.warn({ err, worker_id: this.id }, 'renewing leases failed; will retry');
    }
  }

  /**
   * Stops claiming, gives running checks up to `graceMs` to finish and be recorded, aborts the
   * rest and gives their listings back. Resolves once nothing of the worker is left running.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopped ??= this.stopNow(graceMs);
    await this.stopped;
  }

  private async stopNow(graceMs: number): Promise<void> {
    await this.claims.stop();
    if (!this.started) return;
    const pending = [...this.running.values()];
    if (pending.length > 0) {
      this.log.info({ running: pending.length, grace_ms: graceMs }, 'worker stopping: letting running checks finish');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        Promise.all(pending.map((p) => p.done)).then(() => false),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs))),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        this.log.warn({ running: this.running.size }, 'worker stopping: abandoning the checks still running');
        for (const p of this.running.values()) p.abort.abort();
        await Promise.all([...this.running.values()].map((p) => p.done));
      }
    }
    clearInterval(this.renewTimer);
    const released = await releaseLeases(this.db, this.id).catch((err: unknown) => {
      this.log.warn({ err }, 'could not give back the listings of abandoned checks; their leases will expire');
      return 0;
    });
    if (released > 0) this.log.info({ released }, 'gave back the listings of abandoned checks');
  }
}
