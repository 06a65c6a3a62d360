/**
 * The one database interface the rest of the code sees. Two implementations: embedded PGlite
 * (src/db/pglite.ts) and a PostgreSQL pool (src/db/postgres.ts). Both return the same JS types:
 * int8 -> number, numeric -> string (exact decimal text), timestamptz -> Date, json -> parsed.
 */
export type Row = Record<string, unknown>;

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  query<T = Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>>;
  /** Several statements, no parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * For the pages of long reads (CSV exports, alert previews): with the embedded engine, which
   * runs one statement at a time, a bulk query waits until the queries in flight when its turn
   * came have finished (or BULK_MAX_WAIT_MS has passed), so short requests waiting then go
   * first, and the bulk read still advances under a steady stream of them. With PostgreSQL it
   * is `query`: the pool's other connections serve the short requests.
   */
  bulkQuery<T = Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>>;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * LISTEN on a channel. `onLost` is called when notifications may have been missed (the
   * listening connection dropped and came back), so callers can drop what they cached.
   */
  listen(channel: string, onMessage: (payload: string) => void, onLost?: () => void): Promise<() => Promise<void>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A failure to reach the database at all (as opposed to a query the database refused). */
export class DatabaseUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/** PostgreSQL error codes we act on. */
export const PG_UNIQUE_VIOLATION = '23505';
export const PG_FOREIGN_KEY_VIOLATION = '23503';

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string; message?: string } | null;
  if (!e || e.code !== PG_UNIQUE_VIOLATION) return false;
  if (!constraint) return true;
  // PGlite does not always fill `constraint`; the message names it in both drivers.
  return e.constraint === constraint || (e.message ?? '').includes(`"${constraint}"`);
}

/** Error classes 08 (connection), 53 (resources), 57P (operator intervention) mean "try later". */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return (
    code.startsWith('08') ||
    code.startsWith('53') ||
    code.startsWith('57P') ||
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code)
  );
}

/** `db` for the pages of a long read: its queries go through `bulkQuery` (see Database). */
export function bulkReader(db: Database): Queryable {
  return { query: (sql, params) => db.bulkQuery(sql, params), exec: (sql) => db.exec(sql) };
}
