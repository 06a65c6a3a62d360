import type { Database, QueryResult } from './types.js';
import { isUnavailable } from './types.js';

/**
 * Reads that may be served by a PostgreSQL streaming replica (DATABASE_READ_URL): price history,
 * trends, the CSV exports and the price-change summary (docs/CONFIGURATION.md, "Read replica").
 * Everything else, and everything a client expects to see right after its own write, reads the
 * primary.
 *
 * How far behind the replica is, is measured, not assumed: every `checkMs` the primary's WAL
 * insert position (`pg_current_wal_insert_lsn()`) is sampled with the time it was asked for, and the replica's
 * replayed position (`pg_last_wal_replay_lsn()`) is read. The newest sample the replica has
 * replayed past gives `caughtUpTo`: every transaction that had committed on the primary by then
 * is on the replica. (`pg_last_xact_replay_timestamp()` alone would say an idle primary's replica
 * is ever further behind, and says nothing of commits not yet shipped.) The insert position, not
 * `pg_current_wal_lsn()` (the write position): with `synchronous_commit = off` a commit returns
 * before its WAL is written, so a write position sampled after it may still lie before its commit
 * record, and a replica that replayed to it would lack the write.
 *
 * A read goes to the replica only when all of these hold, otherwise to the primary:
 * - the last check succeeded within three check intervals, and the replica is in recovery;
 * - it has caught up to within `maxLagMs` of now (the documented bound on how stale a replica
 *   read can be);
 * - the account has no write this process answered after `caughtUpTo` (read-your-writes: a
 *   client that wrote and then reads its history sees its write).
 * A replica query that fails because the replica is unreachable, shutting down or cancelled the
 * statement for a recovery conflict is run again on the primary, and the replica is not used
 * until the next successful check.
 */
export interface ReadRouting {
  /** The database for a read of `accountId` that may be served by the replica. */
  forAccount(accountId: string): Database;
  /** A write of `accountId` committed (called as its answer is sent). */
  wrote(accountId: string): void;
  /** For /metrics and tests: whether reads go to the replica now, and how far behind it is (ms; undefined when unknown). */
  state(): { configured: boolean; usable: boolean; lagMs: number | undefined; fallbacks: number; replicaReads: number };
  /** Runs one lag check now (tests; the timer runs it every checkMs). */
  check(): Promise<void>;
  close(): Promise<void>;
}

/** Without DATABASE_READ_URL: every read on the one database. */
export function primaryOnly(db: Database): ReadRouting {
  return {
    forAccount: () => db,
    wrote: () => undefined,
    state: () => ({ configured: false, usable: false, lagMs: undefined, fallbacks: 0, replicaReads: 0 }),
    check: async () => undefined,
    close: async () => undefined,
  };
}

/** "16/B374D848" -> a comparable number. */
export function parseLsn(lsn: string): bigint {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

/** Errors after which a replica read is retried on the primary: unreachable, shutting down, recovery conflict. */
function replicaFailed(err: unknown): boolean {
  if (isUnavailable(err)) return true;
  const code = (err as { code?: unknown } | null)?.code;
  // 40001: "canceling statement due to conflict with recovery"; 25P02 never reaches here.
  return code === '40001';
}

export interface ReplicaOptions {
  maxLagMs: number;
  checkMs: number;
  onError?: (err: unknown) => void;
  /** A check succeeded (after onError: the replica is back). */
  onRecovered?: () => void;
  now?: () => number;
  /** Accounts remembered for read-your-writes before the memory is dropped (and every account waits). */
  maxAccounts?: number;
}

export function replicaRouting(primary: Database, replica: Database, opts: ReplicaOptions): ReadRouting {
  const now = opts.now ?? Date.now;
  const maxAccounts = opts.maxAccounts ?? 100_000;
  /** Primary WAL positions, oldest first, with when they were asked for. */
  const samples: { at: number; lsn: bigint }[] = [];
  let caughtUpTo = -Infinity;
  let lastOk = -Infinity;
  let inRecovery = false;
  /** accountId -> when this process last answered a write of it. */
  const writes = new Map<string, number>();
  /** Writes forgotten when `writes` was full: every account counts as written then. */
  let floor = -Infinity;
  let fallbacks = 0;
  let replicaReads = 0;
  let closed = false;

  const usable = (t: number) => inRecovery && t - lastOk <= 3 * opts.checkMs && t - caughtUpTo <= opts.maxLagMs;

  async function check(): Promise<void> {
    const at = now();
    try {
      const p = await primary.query<{ lsn: string }>(
        `/* readReplicaPrimaryLsn */ select pg_current_wal_insert_lsn()::text as lsn`,
      );
      samples.push({ at, lsn: parseLsn(p.rows[0]!.lsn) });
      const r = await replica.query<{ recovery: boolean; lsn: string | null }>(
        `/* readReplicaReplayLsn */ select pg_is_in_recovery() as recovery, pg_last_wal_replay_lsn()::text as lsn`,
      );
      const row = r.rows[0]!;
      inRecovery = row.recovery;
      if (!row.recovery || row.lsn === null) {
        // Promoted, or not a streaming standby: not a replica of ours any more.
        lastOk = -Infinity;
        return;
      }
      const replayed = parseLsn(row.lsn);
      let newest = -1;
      for (let i = 0; i < samples.length; i++) if (samples[i]!.lsn <= replayed) newest = i;
      if (newest >= 0) {
        caughtUpTo = Math.max(caughtUpTo, samples[newest]!.at);
        samples.splice(0, newest); // keep the newest replayed one: it still bounds the next check
      }
      // Bounded: a replica that stops replaying keeps at most a lag bound's worth of samples.
      const keep = Math.ceil(opts.maxLagMs / opts.checkMs) + 4;
      if (samples.length > keep) samples.splice(0, samples.length - keep);
      lastOk = now();
      opts.onRecovered?.();
      for (const [account, t] of writes) if (t < caughtUpTo) writes.delete(account);
    } catch (err) {
      lastOk = -Infinity;
      opts.onError?.(err);
    }
  }

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const tick = () => {
    if (closed || running) return;
    running = check().finally(() => (running = undefined));
  };
  timer = setInterval(tick, opts.checkMs);
  timer.unref();
  tick();

  /** The replica, its failures answered by the primary. */
  const run = async <T>(q: (db: Database) => Promise<T>): Promise<T> => {
    try {
      const out = await q(replica);
      replicaReads++;
      return out;
    } catch (err) {
      if (!replicaFailed(err)) throw err;
      lastOk = -Infinity;
      fallbacks++;
      opts.onError?.(err);
      return q(primary);
    }
  };
  const routed: Database = {
    ...replica,
    kind: 'postgres',
    query: <T>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> =>
      run((db) => db.query<T>(sql, params)),
    bulkQuery: <T>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> =>
      run((db) => db.bulkQuery<T>(sql, params)),
    exec: (sql: string) => run((db) => db.exec(sql)),
    // A read replica has no transactions of ours, nor notifications: these stay on the primary.
    transaction: (fn) => primary.transaction(fn),
    listen: (...a) => primary.listen(...a),
    ping: () => primary.ping(),
    close: async () => undefined,
  };

  return {
    forAccount(accountId) {
      const t = now();
      if (!usable(t)) return primary;
      const w = writes.get(accountId);
      if ((w !== undefined && w >= caughtUpTo) || floor >= caughtUpTo) return primary;
      return routed;
    },
    wrote(accountId) {
      const t = now();
      if (writes.size >= maxAccounts) {
        writes.clear();
        floor = t;
      }
      writes.set(accountId, t);
    },
    state() {
      const t = now();
      return {
        configured: true,
        usable: usable(t),
        lagMs: Number.isFinite(caughtUpTo) && t - lastOk <= 3 * opts.checkMs ? t - caughtUpTo : undefined,
        fallbacks,
        replicaReads,
      };
    },
    check: async () => {
      await running;
      await check();
    },
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
      await replica.close();
    },
  };
}
