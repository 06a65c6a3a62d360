import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { type Database, isUnavailable } from '../../db/types.js';
import { type ClaimResult, ClaimLoop, newWorkerId } from '../../jobs/claim-loop.js';
import { type AttemptOutcome, isSuccess, type OutcomeRules, recordFailure, recordSuccesses } from './outcome.js';
import { webhookBody } from './payload.js';
import type { SendResult, WebhookSender } from './send.js';
import { signatureHeader } from './signing.js';
import { SuccessGroup } from './success-group.js';
import {
  claimEndpoints,
  DELIVERIES_CHANNEL,
  type ClaimedEndpoint,
  giveBackEndpoints,
  nextWakeInMs,
  type PendingAttempt,
  pendingAttempts,
  releaseAllEndpoints,
  releaseEndpoint,
} from './sql.js';

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
 * a lease that runs out). No polling. The claiming is src/jobs/claim-loop.ts's.
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
  private readonly claims: ClaimLoop;
  private started = false;
  private stopped: Promise<void> | undefined;

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
    this.id = opts.workerId ?? newWorkerId();
    this.claims = new ClaimLoop({
      db: this.db,
      channel: DELIVERIES_CHANNEL,
      room: () => this.concurrency - this.serving.size,
      claim: (free) => this.claim(free),
      onError: (err) => {
        this.log.warn({ err, worker_id: this.id }, 'claiming webhook endpoints failed; will retry');
        this.emit('error', err as Error);
      },
    });
    this.on('error', () => undefined);
  }

  private get stopping(): boolean {
    return this.claims.stopping;
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.claims.start();
  }

  /** Look for due endpoints now (what a NOTIFY does). */
  poke(): void {
    this.claims.poke();
  }

  /** One claim of the loop: with a slot left, the timer is set for the next attempt nobody announces. */
  private async claim(free: number): Promise<ClaimResult> {
    // Before claiming, so that they are due again at once for us or another worker.
    const giveBack = [...this.cutShort].filter((id) => !this.serving.has(id));
    if (giveBack.length > 0) {
      const n = await giveBackEndpoints(this.db, giveBack, this.id);
      for (const id of giveBack) this.cutShort.delete(id);
      this.log.info(
        { worker_id: this.id, endpoints: n },
        'gave back the webhook endpoints whose serving the database cut short',
      );
    }
    const claimed = await claimEndpoints(this.db, this.id, free, this.leaseSeconds);
    // With every slot taken, the end of a serve claims again; otherwise the timer.
    const waitMs = claimed.length < free ? await nextWakeInMs(this.db) : null;
    if (this.stopping) {
      await releaseAllEndpoints(this.db, this.id).catch(() => undefined);
      return { claimed: 0 };
    }
    for (const id of claimed) {
      this.cutShort.delete(id);
      this.serve(id);
    }
    if (claimed.length === 0 && this.serving.size === 0) this.emit('idle');
    return { claimed: claimed.length, wakeAt: waitMs === null ? undefined : Date.now() + Math.ceil(waitMs) };
  }

  private serve(endpointId: string): void {
    const done = this.drain(endpointId)
      .catch((err: unknown) => {
        if (isUnavailable(err)) {
          // Given back once the database answers again (run()), before its lease runs out.
          this.cutShort.add(endpointId);
          this.log.warn(
            { err, endpoint_id: endpointId, worker_id: this.id },
            'serving a webhook endpoint failed: the database is unavailable; it is given back once it answers',
          );
        } else {
          // Its lease runs out and the endpoint is served again (by whoever claims it then).
          this.log.error(
            { err, endpoint_id: endpointId, worker_id: this.id },
            'serving a webhook endpoint failed; it is retried when its lease ends',
          );
        }
        this.emit('error', err as Error);
      })
      .finally(() => {
        this.serving.delete(endpointId);
        // A NOTIFY that came while this endpoint was being given back found it still leased.
        this.claims.poke();
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
      (answered) =>
        recordSuccesses(this.db, {
          endpoint: answered[0]!.endpoint,
          answered,
          workerId: this.id,
          leaseSeconds: this.leaseSeconds,
        }),
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
        const outcome = await recordFailure(this.db, {
          endpoint: a.endpoint,
          attempt: a,
          result,
          workerId: this.id,
          rules: this.rules,
        });
        if (outcome.disabled)
          this.log.warn({ endpoint_id: endpointId, reason: outcome.disabled }, 'webhook endpoint disabled');
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
    this.stopped ??= this.stopNow(graceMs);
    await this.stopped;
  }

  private async stopNow(graceMs: number): Promise<void> {
    await this.claims.stop();
    if (!this.started) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.serving.values()),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
    ]);
    clearTimeout(timer);
    await releaseAllEndpoints(this.db, this.id).catch((err: unknown) => {
      this.log.warn({ err }, 'could not give back the webhook endpoints held; their leases will run out');
    });
  }
}
