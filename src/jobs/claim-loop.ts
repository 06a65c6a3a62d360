import crypto from 'node:crypto';
import os from 'node:os';
import type { Database } from '../db/types.js';

/**
 * A worker's name on the rows it leases: host:pid:random, so a lease in the database says which
 * process on which machine holds it, and two workers of one process never share one.
 */
export function newWorkerId(): string {
  return `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
}

/** What one claim did (ClaimLoopOptions.claim). */
export interface ClaimResult {
  /** How many items it took; taking every free slot means there may be more: claim again. */
  claimed: number;
  /**
   * When to claim again without being poked (ms since the epoch): the next poll, or the
   * earliest moment something becomes due that nobody announces. undefined: only a poke.
   */
  wakeAt?: number | undefined;
}

export interface ClaimLoopOptions {
  /** Listened to (db.listen): a NOTIFY on PostgreSQL, an in-process poke on the embedded database. */
  db: Pick<Database, 'listen'>;
  channel: string;
  /** Free slots: the most a claim may take now. 0: wait for a slot to free (ClaimLoop.wake). */
  room(): number;
  /**
   * Whether a claim is worth its statement without a poke while the last claim filled every free
   * slot (more may be due). Default: whenever a slot is free.
   */
  eager?(free: number): boolean;
  /**
   * Takes up to `free` items and starts work on them. It must not wait for that work; it checks
   * ClaimLoop.stopping after its claim and gives back what it took once stopping. A throw is a
   * failed claim: onError, then the loop retries after a backoff.
   */
  claim(free: number): Promise<ClaimResult>;
  /** A claim threw (log it). `failures` counts the failures in a row. */
  onError(err: unknown, failures: number): void;
  /** The first retry's wait after a failed claim, doubling with each failure in a row (default 500 ms). */
  retryMs?: number;
  /** The longest wait between retries (default 30 s). */
  retryMaxMs?: number;
}

/**
 * The claim loop of every queue worker (src/checks/worker.ts, src/webhooks/delivery/worker.ts,
 * src/alerts/engine/backlog.ts, src/email/start.ts): listen-and-poke, claim when a slot is free and something may be
 * due, sleep until a poke, a freed slot or a timer, back off after a failed claim, stop.
 * docs/ARCHITECTURE.md ("Queues: the claim loop") is its contract.
 *
 * What the worker keeps: its leases and their renewal, the work itself, and what happens to the
 * work in flight on stop (a grace, then giving back): stop() here ends only the claiming.
 */
export class ClaimLoop {
  private readonly opts: ClaimLoopOptions;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  /** A poke came (or a timer ran out): claim at the next free slot. */
  private due = true;
  /** The last claim filled every free slot. */
  private more = false;
  private wakeAt: number | undefined;
  private wakeUp: (() => void) | undefined;
  private failures = 0;

  constructor(opts: ClaimLoopOptions) {
    this.opts = opts;
  }

  /** stop() was called: a claim that returns now gives back what it took. */
  get stopping(): boolean {
    return this.stopped;
  }

  /** Listens, then claims at once (for what was queued while no worker ran). */
  async start(): Promise<void> {
    if (this.loop) return;
    this.unlisten = await this.opts.db.listen(
      this.opts.channel,
      () => this.poke(),
      () => this.poke(), // notifications may have been missed while the connection was down
    );
    this.loop = this.run();
    // stop() came while the listen was starting: it found no loop to wait for, so end here.
    if (this.stopped) await this.stop();
  }

  /** Something may be due: claim at the next free slot (what a NOTIFY does). */
  poke(): void {
    this.due = true;
    this.wake();
  }

  /** A slot freed: look again whether to claim (after a claim that filled every slot). */
  wake(): void {
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    const { opts } = this;
    while (!this.stopped) {
      if (this.wakeAt !== undefined && Date.now() >= this.wakeAt) {
        this.wakeAt = undefined;
        this.due = true;
      }
      const free = opts.room();
      if (free > 0 && (this.due || (this.more && (opts.eager?.(free) ?? true)))) {
        this.due = false;
        let result: ClaimResult;
        try {
          result = await opts.claim(free);
          this.failures = 0;
        } catch (err) {
          this.failures++;
          opts.onError(err, this.failures);
          this.more = false;
          const first = opts.retryMs ?? 500;
          this.wakeAt = Date.now() + Math.min(opts.retryMaxMs ?? 30_000, first * 2 ** Math.min(this.failures - 1, 16));
          await this.sleep();
          continue;
        }
        if (this.stopped) break;
        this.more = result.claimed >= free;
        this.wakeAt = result.wakeAt;
        if (this.more) continue;
      }
      await this.sleep();
    }
  }

  /**
   * Until a poke, wake(), stop(), or (while a slot is free) the timer. With every slot busy
   * there is no timer: only a freed slot makes room to claim.
   */
  private sleep(): Promise<void> {
    const room = this.opts.room() > 0;
    if (this.stopped || (this.due && room)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer =
        room && this.wakeAt !== undefined
          ? setTimeout(() => this.wakeUp?.(), Math.max(0, this.wakeAt - Date.now()))
          : undefined;
      this.wakeUp = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
    });
  }

  /**
   * No more claims: resolves once the claim in progress (if any) has returned and the channel is
   * no longer listened to. The work in flight is the worker's to finish or give back.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
    if (!this.loop) return; // stop() before start(): start() cleans up after its listen
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    await unlisten?.().catch(() => undefined);
  }
}
