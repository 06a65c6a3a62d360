/** Page slots: at most `maxPages` renders at once; the rest wait in arrival order. */
import { cancelled } from './errors.js';

export class PageSlots {
  private free: number;
  private readonly waiters: Array<() => void> = [];

  constructor(n: number) {
    this.free = n;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /** A slot, or the cancellation if `signal` aborts while waiting. Returns its release. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw cancelled(signal);
    if (this.free > 0) {
      this.free--;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const i = this.waiters.indexOf(wake);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(cancelled(signal!));
      };
      this.waiters.push(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.free++;
    };
  }
}
