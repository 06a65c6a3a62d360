/**
 * Every background task a pricehound process runs, and in which role: the one list
 * (docs/OPERATIONS.md, "Background work"). A new task is one entry.
 *
 * This is the one file of src/jobs/ that imports areas (checks, prices, http, ...): it composes
 * their tasks as src/app.ts composes their routes. The rest of src/jobs/ (running tasks on a
 * timer, starting and stopping a set of them) must not import any area.
 */
import type { Logger } from 'pino';
import { startAlertBacklog } from '../alerts/engine/backlog.js';
import type { Extractor } from '../checks/extractor.js';
import { releaseStaleLeases } from '../checks/service.js';
import { CheckWorker } from '../checks/worker.js';
import type { Config } from '../config.js';
import type { Clock } from '../time.js';
import { MAINTENANCE_INTERVAL_MS, maintain } from '../db/pglite-maintenance.js';
import type { Database } from '../db/types.js';
import { startEmailWork } from '../email/start.js';
import type { Fetcher } from '../fetcher/types.js';
import { pruneEvents } from '../events/service.js';
import { deleteExpiredIdempotencyKeys } from '../http/idempotency.js';
import { buildOnlineIndexes } from '../db/online-indexes.js';
import { partitionsRun } from '../db/partitions.js';
import { EVENT_PARTITIONS } from '../events/service.js';
import { OBSERVATION_PARTITIONS } from '../prices/partitions/index.js';
import { OBSERVATION_INDEXES } from '../prices/partitions/indexes.js';
import { packRun, retentionRun } from '../prices/partitions/job.js';
import { rollupRun } from '../prices/rollup/job.js';
import { blocksRun, spansRun } from '../prices/trends/job.js';

import { localDaysRun, monthTextsRun } from '../prices/history/job.js';
import { startDeliveryWorker } from '../webhooks/delivery/start.js';
import { type BackgroundTask, type BackgroundWork, periodicTask, type Role, startTasks } from './background.js';

/** The services of the process that tasks run on (src/runtime.ts opens them). */
export interface TaskContext {
  config: Config;
  db: Database;
  /** The deployment's key (src/db/id-key.ts): email derives its code and link keys from it. */
  deploymentKey: Buffer;
  /** The application clock (src/time.ts): retention and roll-up cutoffs are read from it. */
  clock: Clock;
  fetcher: Fetcher;
  extractor: Extractor;
  log: Logger;
}

const MINUTE = 60_000;

export const BACKGROUND_TASKS: readonly BackgroundTask<TaskContext>[] = [
  {
    // Scheduled checks: the claim loop, WORKER_CONCURRENCY checks at a time; any number of
    // worker processes share the due listings (docs/MONITORING.md).
    name: 'checks',
    roles: ['worker'],
    async start({ config, db, fetcher, extractor, log }) {
      // The embedded database has one owner, us: a lease found now was left by a run that died.
      if (db.kind === 'pglite') {
        const released = await releaseStaleLeases(db);
        if (released > 0) log.info({ released }, 'released the leases a previous run left behind');
      }
      const worker = new CheckWorker({ db, fetcher, extractor, log, concurrency: config.workerConcurrency });
      await worker.start();
      // Its grace is the shutdown's: checks still running then are abandoned and their listings
      // given back for another worker (or the next start) to check.
      return {
        stop: (graceMs) => worker.stop(graceMs),
        ready: { worker: { id: worker.id, concurrency: worker.concurrency } },
      };
    },
  },
  {
    // Webhook delivery: WEBHOOK_CONCURRENCY endpoints at a time, woken by the NOTIFY of every
    // new attempt; any number of worker processes share the endpoints (docs/WEBHOOKS.md).
    name: 'webhook-deliveries',
    roles: ['worker'],
    start: ({ config, db, log }) => startDeliveryWorker(config, db, log),
  },
  {
    // Email (docs/EMAIL.md): each minute's events and the due digests into the mail outbox, and
    // the outbox over SMTP with retries; off without SMTP_URL. Any number of worker processes
    // share it (FOR UPDATE SKIP LOCKED, one unique key per mail).
    name: 'email',
    roles: ['worker'],
    start: ({ config, db, deploymentKey, log }) => startEmailWork(config, db, deploymentKey, log),
  },
  {
    // Alert rules over large ingested batches, just after their commit (docs/alerts/firing.md,
    // "Large batches"); any number of worker processes share the backlog, an account's batches
    // in order.
    name: 'alert-backlog',
    roles: ['worker'],
    start: ({ db, log }) => startAlertBacklog(db, log),
  },
  periodicTask({
    // PRICE_ROLLUP_AFTER_DAYS (docs/prices/HISTORY.md, "Retention"); every API process runs it,
    // each batch locks its series.
    name: 'price-rollup',
    title: 'price roll-up',
    roles: ['api'],
    firstAfterMs: MINUTE,
    everyMs: 60 * MINUTE,
    run: ({ db, config, log, clock }) =>
      config.priceRollupAfterDays === undefined ? undefined : rollupRun(db, config.priceRollupAfterDays, log, clock),
  }),
  periodicTask({
    // Every partitioned table's partitions, created ahead (src/db/partitions.ts): the months of
    // price_observations (docs/PRICES.md, "Partitions"), the days of events and their webhook
    // deliveries (docs/EVENTS.md, "Retention"). Every process runs it, an advisory lock per set
    // makes them take turns.
    name: 'partitions',
    title: 'partition creation',
    roles: ['api', 'worker'],
    firstAfterMs: 5_000,
    everyMs: 60 * MINUTE,
    run: ({ db, log }) => partitionsRun(db, [OBSERVATION_PARTITIONS, EVENT_PARTITIONS], log),
  }),
  periodicTask({
    // Indexes a migration declared on a partitioned table alone, built partition by partition
    // with CREATE INDEX CONCURRENTLY (src/db/online-indexes.ts, docs/SCALING.md "Indexes built
    // online"); every API process runs it (a partition another one is building is left to it).
    // A run with nothing left to build reads the catalogue and returns.
    name: 'indexes',
    title: 'online index builds',
    roles: ['api'],
    firstAfterMs: 10_000,
    everyMs: 60 * MINUTE,
    run:
      ({ db, log }) =>
      async (signal) => {
        for (const r of await buildOnlineIndexes(db, OBSERVATION_INDEXES, () => signal.aborted))
          if (r.built.length > 0 || r.dropped) log.info({ component: 'indexes', ...r }, 'index built online');
      },
  }),
  periodicTask({
    // PRICE_RETENTION_DAYS (docs/PRICES.md, "Retention by partition"): whole months dropped,
    // the edge month deleted in short batches; every API process runs it.
    name: 'price-retention',
    title: 'price retention',
    roles: ['api'],
    firstAfterMs: MINUTE,
    everyMs: 60 * MINUTE,
    run: ({ db, config, log, clock }) =>
      config.priceRetentionDays === undefined ? undefined : retentionRun(db, config.priceRetentionDays, log, clock),
  }),
  periodicTask({
    // PRICE_PACK_AFTER_DAYS (docs/SCALING.md, "Packed months"): each closed month's day rows and
    // blocks rewritten once in key order, so a product's month is read from a few pages; every
    // API process runs it (the set's advisory lock: one at a time). PostgreSQL only.
    name: 'price-pack',
    title: 'price month packing',
    roles: ['api'],
    firstAfterMs: 4 * MINUTE,
    everyMs: 60 * MINUTE,
    run: ({ db, config, log, clock }) =>
      db.kind !== 'postgres' || config.pricePackAfterDays === 0
        ? undefined
        : packRun(db, config.pricePackAfterDays, log, clock),
  }),
  periodicTask({
    // The trends' blocks of whole days (docs/prices/TRENDS.md, "Blocks"): a cache the trends read
    // instead of the day rows, built in short transactions once a block has ended; every API
    // process runs it (a second one finds the blocks built).
    name: 'price-blocks',
    title: 'price blocks',
    roles: ['api'],
    firstAfterMs: 2 * MINUTE,
    everyMs: 60 * MINUTE,
    run: ({ db, log, clock }) => blocksRun(db, log, clock),
  }),
  periodicTask({
    // The trends' spans of whole days (docs/prices/TRENDS.md, "Spans"): a cache per product and
    // UTC midnight the trends read instead of the blocks, built in short transactions for today's
    // midnight (what is missing) and tomorrow's; every API process runs it (a second one finds the
    // spans built).
    name: 'price-spans',
    title: 'price spans',
    roles: ['api'],
    firstAfterMs: 3 * MINUTE,
    everyMs: 60 * MINUTE,
    run: ({ db, log, clock }) => spansRun(db, log, clock),
  }),
  periodicTask({
    // The local days of HISTORY_ZONES (docs/prices/HISTORY.md, "Day buckets away from UTC"): a
    // cache the history's day buckets in those zones read instead of the hours, built in short
    // transactions an hour after a local day ends; every API process runs it (a second one finds
    // the days built). Nothing without zones.
    name: 'price-local-days',
    title: 'price local days',
    roles: ['api'],
    firstAfterMs: 3 * MINUTE,
    everyMs: 60 * MINUTE,
    run: ({ db, config, log, clock }) =>
      config.historyZones.length === 0 ? undefined : localDaysRun(db, config.historyZones, log, clock),
  }),
  periodicTask({
    // The month texts of the UTC days (docs/prices/HISTORY.md, "Month texts"): a cache the
    // history's day buckets in UTC read instead of a whole month's day rows, built in short
    // transactions once a month has ended; every API process runs it (a second one finds the
    // texts built).
    name: 'price-day-texts',
    title: 'price month texts',
    roles: ['api'],
    firstAfterMs: 5 * MINUTE,
    everyMs: 60 * MINUTE,
    run: ({ db, log, clock }) => monthTextsRun(db, log, clock),
  }),
  periodicTask({
    // Idempotency keys past their 24 hours; every API process runs it (one delete statement).
    name: 'idempotency-key-sweep',
    title: 'idempotency key cleanup',
    roles: ['api'],
    everyMs: 10 * MINUTE,
    run:
      ({ db }) =>
      () =>
        deleteExpiredIdempotencyKeys(db),
  }),
  periodicTask({
    // Events past EVENT_RETENTION_DAYS (30 by default), with their deliveries: whole days
    // dropped (docs/EVENTS.md, "Retention"); every API process runs it.
    name: 'event-prune',
    title: 'event pruning',
    roles: ['api'],
    firstAfterMs: MINUTE,
    everyMs: 60 * MINUTE,
    run:
      ({ db, config, clock, log }) =>
      async (signal) => {
        const r = await pruneEvents(db, config.eventRetentionDays, new Date(clock.now()), {
          stop: () => signal.aborted,
        });
        if (r.dropped.length > 0 || r.deleted > 0) log.info({ component: 'event-prune', ...r }, 'events pruned');
      },
  }),
  periodicTask({
    // The embedded engine has no autovacuum: without this, plans made on nearly empty tables
    // stayed for good and dead rows were never reclaimed (src/db/pglite-maintenance.ts).
    name: 'embedded-maintenance',
    title: 'embedded database maintenance',
    roles: ['api', 'worker'],
    everyMs: MAINTENANCE_INTERVAL_MS,
    run: ({ db, log }) =>
      db.kind === 'pglite'
        ? (signal) => maintain(db, { signal, onDone: (done) => log.debug(done, 'embedded database table maintained') })
        : undefined,
  }),
];

/** Starts the background tasks of a process with `roles`; stop them with the result's stop(graceMs). */
export function startBackgroundWork(
  services: Omit<TaskContext, 'log'>,
  roles: Readonly<Record<Role, boolean>>,
  log: Logger,
): Promise<BackgroundWork> {
  const { config, db, deploymentKey, clock, fetcher, extractor } = services;
  return startTasks(BACKGROUND_TASKS, { config, db, deploymentKey, clock, fetcher, extractor, log }, roles);
}
