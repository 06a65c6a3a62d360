import { ERRORS } from './errors.js';

/**
 * Requests whose work runs long (an alert preview over a year of prices): a process runs at most
 * `slots` of them at once and at most one per account, so one tenant's heavy requests neither
 * take every database connection nor queue ahead of other tenants'. The rest wait their turn,
 * oldest first, skipping accounts that already run one; a request that waited `maxWaitMs` is
 * answered 503 with Retry-After, and one whose client went away leaves the line.
 */
export class HeavyLane {
  private readonly running = new Set<string>();
  private readonly waiting: { account: string; start: () => void }[] = [];

  constructor(
    private readonly slots: number,
    private readonly maxWaitMs: number,
    private readonly what: string,
  ) {}

  async run<T>(account: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.enter(account, signal);
    try {
      return await work();
    } finally {
      this.running.delete(account);
      this.next();
    }
  }

  private enter(account: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const entered = new Promise<void>((resolve, reject) => {
      const leave = (err: unknown) => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        reject(err);
      };
      const aborted = () => leave(signal!.reason);
      const entry = {
        account,
        start: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', aborted);
          this.running.add(account);
          resolve();
        },
      };
      const timer = setTimeout(
        () =>
          leave(
            ERRORS.busy(
              `Too many ${this.what} are running; retry in a few seconds`,
              Math.max(1, Math.ceil(this.maxWaitMs / 1000)),
            ),
          ),
        this.maxWaitMs,
      );
      signal?.addEventListener('abort', aborted, { once: true });
      this.waiting.push(entry);
    });
    this.next();
    return entered;
  }

  private next(): void {
    for (let i = 0; i < this.waiting.length && this.running.size < this.slots;) {
      const entry = this.waiting[i]!;
      if (this.running.has(entry.account)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      entry.start();
    }
  }
}
