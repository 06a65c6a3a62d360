import { hourStart } from '../time.js';
import type { Database } from '../db/types.js';

export interface Tally {
  requests: number;
  rejected: number;
}

export interface HourUsage extends Tally {
  /** Start of the UTC hour. */
  hour: Date;
}

/**
 * One statement: the counts, and each key's last use (`api_keys.last_used_at`, shown by the keys
 * API) moved forward, never back (another process may have written a later one).
 */
const FLUSH_SQL = `/* flushUsage */
with used as (
  update api_keys k set last_used_at = greatest(k.last_used_at, u.at)
    from unnest($5::text[], $6::timestamptz[]) as u (key_id, at)
   where k.id = u.key_id
)
insert into api_usage (key_id, hour, requests, rejected)
select u.key_id, u.hour, u.requests, u.rejected
  from unnest($1::text[], $2::timestamptz[], $3::bigint[], $4::bigint[]) as u (key_id, hour, requests, rejected)
  join api_keys k on k.id = u.key_id
on conflict (key_id, hour) do update
  set requests = api_usage.requests + excluded.requests,
      rejected = api_usage.rejected + excluded.rejected`;

const HISTORY_SQL = `/* usageHistory */
select hour, requests, rejected
  from api_usage
 where key_id = $1 and hour >= $2
 order by hour desc`;

/**
 * Per-key hourly request counts for `GET /usage` history, and each key's last use for the keys
 * API (`last_used_at`). Counted in memory on the request path and written in one statement every
 * few seconds (and at shutdown), so counting costs no query per request: a key's `last_used_at`
 * is written at most once per flush, however many requests it makes. A failed write keeps the
 * counts for the next attempt.
 *
 * Writes and history reads take turns: a read sees each count exactly once, either in the table
 * or still in memory, never in both and never in neither (as it could while a write was in
 * flight on another connection).
 */
export class UsageRecorder {
  /** keyId -> hour start (ms) -> counts not written yet */
  private pending = new Map<string, Map<number, Tally>>();
  /** keyId -> its latest request (ms) not written yet */
  private pendingUse = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private turn: Promise<unknown> = Promise.resolve();
  private queuedFlushes = 0;

  constructor(
    private readonly db: Database,
    private readonly onError: (err: unknown) => void,
    private readonly intervalMs = 5_000,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      // a slow database must not pile up timer flushes behind each other
      if (this.queuedFlushes === 0) void this.flush();
    }, this.intervalMs);
    this.timer.unref();
  }

  record(keyId: string, nowMs: number, allowed: boolean): void {
    const hour = hourStart(nowMs);
    let hours = this.pending.get(keyId);
    if (!hours) {
      hours = new Map();
      this.pending.set(keyId, hours);
    }
    let t = hours.get(hour);
    if (!t) {
      t = { requests: 0, rejected: 0 };
      hours.set(hour, t);
    }
    if (allowed) t.requests++;
    else t.rejected++;
  }

  /**
   * A request authenticated by the key at `nowMs`, counted or not (GET /usage is not counted, but
   * it is a use of the key).
   */
  used(keyId: string, nowMs: number): void {
    const before = this.pendingUse.get(keyId);
    if (before === undefined || nowMs > before) this.pendingUse.set(keyId, nowMs);
  }

  /**
   * Runs `read` (a query of api_keys) in turn with the writes, like `history`, and answers it with
   * a function that gives a key's last use: the later of what the row holds and what this process
   * saw but has not written yet. So a key used a moment ago shows it at once here; another
   * process's use shows within its flush interval.
   */
  withLastUse<T>(read: () => Promise<T>): Promise<[T, (keyId: string, stored: Date | null) => Date | null]> {
    return this.exclusive(async () => {
      const rows = await read();
      const seen = new Map(this.pendingUse);
      return [
        rows,
        (keyId, stored) => {
          const mine = seen.get(keyId);
          return mine !== undefined && (stored === null || mine > stored.getTime()) ? new Date(mine) : stored;
        },
      ];
    });
  }

  /** Runs `fn` when the previous write or read is done, and makes the next one wait for it. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** The key's hours from `since` on, newest first: what is written plus what is not yet. */
  history(keyId: string, since: Date): Promise<HourUsage[]> {
    return this.exclusive(async () => {
      const r = await this.db.query<HourUsage>(HISTORY_SQL, [keyId, since]);
      const byHour = new Map(
        r.rows.map((row) => [row.hour.getTime(), { requests: row.requests, rejected: row.rejected }]),
      );
      for (const [hour, t] of this.pending.get(keyId) ?? []) {
        if (hour < since.getTime()) continue;
        const cur = byHour.get(hour) ?? { requests: 0, rejected: 0 };
        byHour.set(hour, { requests: cur.requests + t.requests, rejected: cur.rejected + t.rejected });
      }
      return [...byHour.entries()].sort(([a], [b]) => b - a).map(([hour, t]) => ({ hour: new Date(hour), ...t }));
    });
  }

  /** Writes what is counted so far (after any write or read already under way). */
  flush(): Promise<void> {
    this.queuedFlushes++;
    return this.exclusive(async () => {
      this.queuedFlushes--;
      if (this.pending.size === 0 && this.pendingUse.size === 0) return;
      const batch = this.pending;
      this.pending = new Map();
      const uses = this.pendingUse;
      this.pendingUse = new Map();
      const ids: string[] = [];
      const hours: Date[] = [];
      const requests: number[] = [];
      const rejected: number[] = [];
      for (const [id, byHour] of batch) {
        for (const [hour, t] of byHour) {
          ids.push(id);
          hours.push(new Date(hour));
          requests.push(t.requests);
          rejected.push(t.rejected);
        }
      }
      try {
        await this.db.query(FLUSH_SQL, [
          ids,
          hours,
          requests,
          rejected,
          [...uses.keys()],
          [...uses.values()].map((ms) => new Date(ms)),
        ]);
      } catch (err) {
        this.restore(batch);
        for (const [id, ms] of uses) this.used(id, ms);
        this.onError(err);
      }
    });
  }

  /** Puts counts whose write failed back, added to what came in meanwhile. */
  private restore(batch: Map<string, Map<number, Tally>>): void {
    for (const [id, byHour] of batch) {
      for (const [hour, t] of byHour) {
        let hours = this.pending.get(id);
        if (!hours) {
          hours = new Map();
          this.pending.set(id, hours);
        }
        const cur = hours.get(hour);
        if (cur) {
          cur.requests += t.requests;
          cur.rejected += t.rejected;
        } else hours.set(hour, t);
      }
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
