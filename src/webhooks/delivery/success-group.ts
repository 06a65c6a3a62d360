import type { AttemptOutcome } from './outcome.js';

/**
 * Group commit of an endpoint's successful attempts: the first answer is written at once, while
 * the next attempt is being sent; answers that come while a write is in flight go out together
 * in the next one. One endpoint's writes stay in order and never overlap. Once a write finds the
 * endpoint no longer held, later answers are not written (they stay pending and are sent again
 * by whoever serves the endpoint next: at least once). At most `limit` answers wait unwritten
 * (room()), so a worker killed mid-flight leaves at most that many to be sent twice.
 */
export class SuccessGroup<T> {
  private buffer: T[] = [];
  private writing = 0;
  private running: Promise<void> | undefined;
  private failure: unknown;
  /** false once a write found the endpoint taken over, disabled or gone. */
  held = true;

  constructor(
    private readonly write: (items: T[]) => Promise<AttemptOutcome[]>,
    private readonly recorded: (outcome: AttemptOutcome) => void,
    private readonly limit: number,
  ) {}

  /**
   * Waits while `limit` answers are unwritten (being written or waiting to be). Throws a write's
   * error: nothing more should be sent while answers cannot be recorded.
   */
  async room(): Promise<void> {
    while (this.running && this.buffer.length + this.writing >= this.limit) await this.running;
    if (this.failure !== undefined) throw this.failure;
  }

  add(item: T): void {
    this.buffer.push(item);
    // Once a write failed or found the endpoint lost, nothing more is written (settle() says
    // so). A write starts only when there is one to do, so run() always reaches an await: an
    // async function that returns without one has run its `finally` (clearing `running`) before
    // the assignment below, which then kept a settled promise in `running` for good, and
    // settle() awaited it in a loop that never let the event loop run again (the worker froze
    // after a PostgreSQL outage failed a write: docs/RELIABILITY.md).
    if (this.running || !this.held || this.failure !== undefined) return;
    this.running = this.run();
  }

  /** Waits until every answer added so far is written; whether the endpoint is still held. Throws a write's error. */
  async settle(): Promise<boolean> {
    while (this.running) await this.running;
    if (this.failure !== undefined) throw this.failure;
    return this.held;
  }

  private async run(): Promise<void> {
    try {
      do {
        const items = this.buffer.splice(0);
        this.writing = items.length;
        const outcomes = await this.write(items);
        this.writing = 0;
        for (const o of outcomes) this.recorded(o);
        this.held = outcomes.every((o) => o.held);
      } while (this.buffer.length > 0 && this.held);
    } catch (err) {
      this.failure = err;
    } finally {
      this.writing = 0;
      this.running = undefined;
    }
  }
}
