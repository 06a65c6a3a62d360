import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import os from 'node:os';
import type { Logger } from 'pino';
import { type Database, isUnavailable } from '../../db/types.js';
import { type AttemptOutcome, isSuccess, type OutcomeRules, recordFailure, recordSuccesses } from './outcome.js';
import { webhookBody } from './payload.js';
import type { SendResult, WebhookSender } from './send.js';
import { signatureHeader } from './signing.js';
import { SuccessGroup } from './success-group.js';
import { claimEndpoints, DELIVERIES_CHANNEL, type ClaimedEndpoint, giveBackEndpoints, nextWakeInMs, type PendingAttempt, pendingAttempts, releaseAllEndpoints, releaseEndpoint } from './sql.js';

export interface DeliveryWorkerOptions {
  db: Database;
  sender: WebhookSender;
  log: Logger;
  rules: OutcomeRules;
  /** Endpoints served at once (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** The whole of one attempt, in ms (WEBHOOK_TIMEOUT): the lease outlasts it. */
  timeoutMs: number;
  userAgent: string;
  /** Defaults to host:pid:random. */
  workerId?: string;
}

interface WorkerEvents {
  /** An attempt was made and recorded. */
  attempted: [AttemptOutcome];
  /** A claim found nothing due and no endpoint is being served. */
  idle: [];
  /** A database statement failed (logged too); the worker carries on. */
  error: [Error];
}

/** Attempts read per query while serving an endpoint. */
const BATCH = 100;
/**
 * Answered attempts of an endpoint that may wait unrecorded while the next ones go out: their
 * writes are grouped (up to this many per statement), and a worker killed mid-flight sends at
 * most this many again (docs/WEBHOOKS.md, "At least once").
 */
export const UNRECORDED_MAX = 4;
/** After a claim fails (database down), wait this long before the next, doubling up to 30 s. */
const CLAIM_RETRY_MS = 500;

/**
 * Delivers webhooks (docs/WEBHOOKS.md, "Delivery"): leases endpoints with a due attempt
 * (src/webhooks/delivery/sql.ts), up to `concurrency` at a time, and serves each one attempt at
 * a time in the order of its events until its queue has nothing due; successes are recorded in
 * groups, one statement per group written while the next attempt goes out (success-group.ts),
 * a failure in a transaction of its own (src/webhooks/delivery/outcome.ts). At least once: a
 * worker that dies between an answer and its record leaves the attempt pending, and whoever
 * takes the endpoint after its lease sends it again.
 *
 * Wake-ups: the NOTIFY of migrations/0004 on `webhook_deliveries` (a dedicated connection on
 * PostgreSQL, in-process on the embedded database), the end of serving an endpoint, and one
 * timer for the earliest moment something becomes due that nobody announces (a retry, a probe,
 * a lease that runs out). No polling.
 */
export class DeliveryWorker extends EventEmitter<WorkerEvents> {
  readonly id: string;
  readonly concurrency: number;
  private readonly db: Database;
  private readonly sender: WebhookSender;
  private readonly log: Logger;
  private readonly rules: OutcomeRules;
  private readonly userAgent: string;
  private readonly leaseSeconds: number;
  private readonly serving = new Map<string, Promise<void>>();
  /** Endpoints still leased to us whose serving the database cut short: given back before the next claim. */
  private readonly cutShort = new Set<string>();
  private stopping = false;
  private loop: Promise<void> | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  /** Something may be due: claim when a slot is free. */
  private claimDue = true;
  /** When the timer says to look again (ms since the epoch); undefined: no timer. */
  private wakeAt: number | undefined;
  private wake: (() => void) | undefined;
  private claimFailures = 0;

  constructor(opts: DeliveryWorkerOptions) {
    super();
    this.db = opts.db;
    this.sender = opts.sender;
    this.log = opts.log;
    this.rules = opts.rules;
    this.concurrency = opts.concurrency;
    this.userAgent = opts.userAgent;
    // Renewed by every success; one attempt never takes longer than the timeout.
    this.leaseSeconds = (2 * opts.timeoutMs + 5_000) / 1000;
    this.id = opts.workerId ?? `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
    this.on('error', () => undefined);
  }

  async start(): Promise<void> {
    if (this.loop) return;
    this.unlisten = await this.db.listen(
      DELIVERIES_CHANNEL,
      () => this.poke(),
      () => this.poke(), // notifications may have been missed while the connection was down
    );
    this.loop = this.run();
  }

  /** Look for due endpoints now (what a NOTIFY does). */
  poke(): void {
    this.claimDue = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      if (this.wakeAt !== undefined && Date.now() >= this.wakeAt) {
        this.wakeAt = undefined;
        this.claimDue = true;
      }
      const free = this.concurrency - this.serving.size;
      if (free > 0 && this.claimDue) {
        this.claimDue = false;
        let claimed: string[];
        let waitMs: number | null;
        try {
          // Before claiming, so that they are due again at once for us or another worker.
          const giveBack = [...this.cutShort].filter((id) => !this.serving.has(id));
          if (giveBack.length > 0) {
            const n = await giveBackEndpoints(this.db, giveBack, this.id);
            for (const id of giveBack) this.cutShort.delete(id);
            this.log.info({ worker_id: this.id, endpoints: n }, 'gave back the webhook endpoints whose serving the database cut short');
          }
          claimed = await claimEndpoints(this.db, this.id, free, this.leaseSeconds);
          // With every slot taken, the end of a serve claims again; otherwise the timer.
          waitMs = claimed.length < free ? await nextWakeInMs(this.db) : null;
          this.claimFailures = 0;
        } catch (err) {
          this.claimFailures++;
          this.log.warn({ err, worker_id: this.id }, 'claiming webhook endpoints failed; will retry');
          this.emit('error', err as Error);
          this.wakeAt = Date.now() + Math.min(30_000, CLAIM_RETRY_MS * 2 ** Math.min(this.claimFailures - 1, 6));
          await this.sleep();
          continue;
        }
        if (this.stopping) {
          await releaseAllEndpoints(this.db, this.id).catch(() => undefined);
          break;
        }
        for (const id of claimed) {
          this.cutShort.delete(id);
          this.serve(id);
        }
        if (claimed.length === free) {
          this.claimDue = true; // there may be more
        } else {
          this.wakeAt = waitMs === null ? undefined : Date.now() + Math.ceil(waitMs);
          if (claimed.length === 0 && this.serving.size === 0) this.emit('idle');
        }
      }
      await this.sleep();
    }
  }

  /** Until a poke, the end of a serve, stop(), or the timer. */
  private sleep(): Promise<void> {
    if (this.claimDue && this.serving.size < this.concurrency) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = this.wakeAt !== undefined ? setTimeout(() => this.wake?.(), Math.max(0, this.wakeAt - Date.now())) : undefined;
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }

  private serve(endpointId: string): void {
    const done = this.drain(endpointId)
      .catch((err: unknown) => {
        if (isUnavailable(err)) {
          // Given back once the database answers again (run()), before its lease runs out.
          this.cutShort.add(endpointId);
          this.log.warn({ err, endpoint_id: endpointId, worker_id: this.id }, 'serving a webhook endpoint failed: the database is unavailable; it is given back once it answers');
        } else {
          // Its lease runs out and the endpoint is served again (by whoever claims it then).
          this.log.error({ err, endpoint_id: endpointId, worker_id: this.id }, 'serving a webhook endpoint failed; it is retried when its lease ends');
        }
        this.emit('error', err as Error);
      })
      .finally(() => {
        this.serving.delete(endpointId);
        // A NOTIFY that came while this endpoint was being given back found it still leased.
        this.claimDue = true;
        this.wake?.();
      });
    this.serving.set(endpointId, done);
  }

  /**
   * Sends the endpoint's due attempts in order until none is due, one fails, or the lease is
   * lost. Successes are written in groups while the next attempt is sent (SuccessGroup); a
   * failure is written after every success before it.
   */
  private async drain(endpointId: string): Promise<void> {
    type Answered = { endpoint: ClaimedEndpoint; attempt: PendingAttempt; result: SendResult; at: Date };
    const group = new SuccessGroup<Answered>(
      (answered) => recordSuccesses(this.db, { endpoint: answered[0]!.endpoint, answered, workerId: this.id, leaseSeconds: this.leaseSeconds }),
      (outcome) => this.emit('attempted', outcome),
      UNRECORDED_MAX,
    );
    for (;;) {
      const batch = await pendingAttempts(this.db, endpointId, this.id, BATCH);
      let more = batch.length === BATCH;
      for (const a of batch) {
        if (!a.due || this.stopping || !group.held) {
          more = false;
          break;
        }
        await group.room();
        if (!group.held) break;
        const result = await this.send(a.endpoint, a);
        if (isSuccess(result)) {
          group.add({ endpoint: a.endpoint, attempt: a, result, at: new Date() });
          continue;
        }
        if (!(await group.settle())) return;
        const outcome = await recordFailure(this.db, { endpoint: a.endpoint, attempt: a, result, workerId: this.id, rules: this.rules });
        if (outcome.disabled) this.log.warn({ endpoint_id: endpointId, reason: outcome.disabled }, 'webhook endpoint disabled');
        this.emit('attempted', outcome);
        return; // the endpoint was given back
      }
      if (!(await group.settle()) || this.stopping) return;
      if (more) continue;
      const r = await releaseEndpoint(this.db, endpointId, this.id);
      if (!r.held || r.released) return;
    }
  }

  private send(ep: ClaimedEndpoint, a: PendingAttempt): Promise<SendResult> {
    const body = webhookBody(ep.format, { id: a.event_id, type: a.type, created_at: a.event_created_at, data: a.data });
    const timestamp = Math.floor(Date.now() / 1000);
    return this.sender.send({
      url: ep.url,
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': this.userAgent,
        'webhook-id': a.event_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(ep, a.event_id, timestamp, body),
      },
    });
  }

  /**
   * Stops claiming; attempts in flight get up to `graceMs` to be answered and recorded; then
   * every endpoint still held is given back (an attempt not recorded stays pending and is sent
   * again by whoever serves the endpoint next).
   */
  async stop(graceMs: number): Promise<void> {
    if (!this.loop || this.stopping) {
      await this.loop;
      return;
    }
    this.stopping = true;
    this.wake?.();
    await this.loop;
    await this.unlisten?.().catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.serving.values()), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    await releaseAllEndpoints(this.db, this.id).catch((err: unknown) => {
      this.log.warn({ err }, 'could not give back the webhook endpoints held; their leases will run out');
    });
  }
}
