import type { Logger } from 'pino';

export interface PeriodicOptions {
  /** Names the task in its log lines (`component`). */
  name: string;
  /** What it does, for its log lines: "<title> failed; will retry". */
  title: string;
  everyMs: number;
  /** The first run, counted from the start; default `everyMs`. */
  firstAfterMs?: number | undefined;
  /**
   * One run. `signal` aborts when the task is being stopped: a long run should end at its next
   * safe point. A run that throws (or rejects) is logged and the task carries on.
   */
  run: (signal: AbortSignal) => Promise<unknown>;
  log: Pick<Logger, 'warn'>;
}

export interface PeriodicTask {
  /** No more runs; resolves once the run in progress, if any, has ended. */
  stop(): Promise<void>;
}

/**
 * Runs `run` every `everyMs`, the first time `firstAfterMs` after the start. A run never
 * overlaps the previous one: a turn that comes while it is still going is skipped, so a slow run
 * (a database that hangs) does not pile up more. The timers are unref'd: a task never keeps the
 * process alive by itself.
 */
export function startPeriodic({
  name,
  title,
  everyMs,
  firstAfterMs = everyMs,
  run,
  log,
}: PeriodicOptions): PeriodicTask {
  const abort = new AbortController();
  let running: Promise<unknown> | undefined;
  let interval: NodeJS.Timeout | undefined;
  const turn = () => {
    if (running) return;
    running = (async () => run(abort.signal))()
      .catch((err: unknown) => log.warn({ err, component: name }, `${title} failed; will retry`))
      .finally(() => (running = undefined));
  };
  const first = setTimeout(() => {
    interval = setInterval(turn, everyMs);
    interval.unref();
    turn();
  }, firstAfterMs);
  first.unref();
  return {
    async stop() {
      abort.abort();
      clearTimeout(first);
      clearInterval(interval);
      await running;
    },
  };
}
