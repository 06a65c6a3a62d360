import type { Logger } from 'pino';
import { type PeriodicOptions, startPeriodic } from './periodic.js';

/** What a process runs: `api` (start, serve) and/or `worker` (start, worker). */
export type Role = 'api' | 'worker';

/** A task of the registry (src/jobs/tasks.ts), started with the services `Ctx` of the process. */
export interface BackgroundTask<Ctx> {
  /** Names it in logs and in BackgroundWork.tasks. */
  name: string;
  /** Started in a process that has any of these roles. */
  roles: readonly Role[];
  /** Starts it; undefined when the configuration turns it off. */
  start(ctx: Ctx): Promise<RunningTask | undefined>;
}

export interface RunningTask {
  /** Stops it; work in progress gets up to `graceMs` where the task can give up part way. */
  stop(graceMs: number): Promise<void>;
  /** Fields for the process's ready log line (the check worker's id and concurrency). */
  ready?: Record<string, unknown>;
}

export interface BackgroundWork {
  /** The names of the tasks running, in the registry's order. */
  readonly tasks: readonly string[];
  /** Every running task's fields for the ready log line. */
  readonly ready: Record<string, unknown>;
  /** Stops every task at once, each with `graceMs`; resolves when all have stopped. */
  stop(graceMs: number): Promise<void>;
}

/**
 * Starts, in order, the tasks of `tasks` that a process with `roles` runs. When one fails to
 * start, those already started are stopped (without grace) and the error is thrown.
 */
export async function startTasks<Ctx>(
  tasks: readonly BackgroundTask<Ctx>[],
  ctx: Ctx,
  roles: Readonly<Record<Role, boolean>>,
): Promise<BackgroundWork> {
  const running: { name: string; task: RunningTask }[] = [];
  const stopAll = (graceMs: number) => Promise.all(running.map((r) => r.task.stop(graceMs))).then(() => undefined);
  try {
    for (const def of tasks) {
      if (!def.roles.some((role) => roles[role])) continue;
      const task = await def.start(ctx);
      if (task) running.push({ name: def.name, task });
    }
  } catch (err) {
    await stopAll(0).catch(() => undefined);
    throw err;
  }
  return {
    tasks: running.map((r) => r.name),
    ready: Object.assign({}, ...running.map((r) => r.task.ready ?? {})) as Record<string, unknown>,
    stop: stopAll,
  };
}

/**
 * A registry entry for a task that runs on a timer (src/jobs/periodic.ts). `run` builds the
 * function of one run from the process's services (undefined: off in this configuration); it
 * may keep state between runs in its closure.
 */
export function periodicTask<Ctx extends { log: Logger }>(def: {
  name: string;
  title: string;
  roles: readonly Role[];
  everyMs: number;
  firstAfterMs?: number;
  run: (ctx: Ctx) => PeriodicOptions['run'] | undefined;
}): BackgroundTask<Ctx> {
  return {
    name: def.name,
    roles: def.roles,
    async start(ctx) {
      const run = def.run(ctx);
      if (!run) return undefined;
      const task = startPeriodic({
        name: def.name,
        title: def.title,
        everyMs: def.everyMs,
        firstAfterMs: def.firstAfterMs,
        run,
        log: ctx.log,
      });
      return { stop: () => task.stop() };
    },
  };
}
