import pino from 'pino';

/** The longest a log line waits for the lines after it before they are written together. */
export const LOG_BATCH_MS = 10;

export interface BatchedStream {
  write(line: string): void;
  /** Writes every line still waiting, synchronously (the process is about to exit). */
  flushSync(): void;
}

/**
 * The process's log destination: pino's asynchronous stdout (sonic-boom) behind a batch that
 * collects the lines of up to LOG_BATCH_MS and hands them over as one string, so a busy API
 * writes its request lines with one write(2) per batch instead of one per request (that write
 * was the largest cost of the log line: docs/BENCHMARKS.md, issue 26). A lone line still goes
 * out within LOG_BATCH_MS. The timer holds the event loop, so the lines are written before the
 * process runs out of work; on exit (process.exit after a fatal error, the end of a shutdown)
 * what waits is written synchronously.
 *
 * Not sonic-boom's own `minLength` + `periodicFlush`: its timer writes (an empty string) every
 * period even when nothing was logged, which cost an idle process 36 ms of CPU per second at
 * 10 ms (measured), and lines written while a write is in flight stay behind until the next
 * period.
 */
export function batchedStdout(fd = 1, delayMs = LOG_BATCH_MS): BatchedStream {
  const dest = pino.destination({ dest: fd, sync: false });
  let closed = false;
  dest.on('close', () => (closed = true));
  let waiting = '';
  let timer: NodeJS.Timeout | undefined;
  const hand = () => {
    timer = undefined;
    const chunk = waiting;
    waiting = '';
    // pino ends the stream when the event loop runs dry (beforeExit); a line logged after that is lost, as it is without the batch.
    if (chunk && !closed) dest.write(chunk);
  };
  const flushSync = () => {
    if (timer) clearTimeout(timer);
    hand();
    if (!closed) dest.flushSync();
  };
  process.on('exit', flushSync);
  return {
    write(line) {
      waiting += line;
      timer ??= setTimeout(hand, delayMs);
    },
    flushSync,
  };
}
