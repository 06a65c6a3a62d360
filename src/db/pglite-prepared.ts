/**
 * Named prepared statements on PGlite. PGlite's `query()` parses, describes and plans every
 * statement again (an unnamed statement each time); in WebAssembly that dominated our queries:
 * GET /products/{id}'s statement cost ~4.9 ms through `query()` against ~0.6 ms as a prepared
 * statement (docs/BENCHMARKS.md). This does what src/db/postgres.ts does with `pg`: each distinct
 * parameterised text is parsed once under a name, then only bound and executed.
 *
 * It speaks the extended protocol through PGlite's `execProtocolStream`, under the same locks
 * PGlite's own `query()` takes (the transaction lock outside a transaction, the query lock in
 * all cases) and with the same value serialisers, result parsers and sync to the file system.
 */
import { type PGlite, parse, protocol, type Results } from '@electric-sql/pglite';

const { serialize } = protocol;
/**
 * Distinct statement texts kept prepared (each plan lives in the engine's memory for the life of
 * the process); beyond it statements run unnamed, as before. The same bound as src/db/postgres.ts.
 */
const MAX_PREPARED = 500;
const NO_SYNC = { syncToFs: false };

/** Statement names are unique per thread, so two instances on one engine never collide. */
let nextName = 1;

interface Prepared {
  name: string;
  paramTypes: number[];
}

export class PreparedStatements {
  private readonly statements = new Map<string, Prepared>();

  constructor(
    private readonly pg: PGlite,
    private readonly maxPrepared = MAX_PREPARED,
  ) {}

  /** Whether `sql` runs as a prepared statement (already is, or there is room for one more). */
  accepts(sql: string): boolean {
    return this.statements.has(sql) || this.statements.size < this.maxPrepared;
  }

  /**
   * Runs `sql` with `params` as a named statement; `inTransaction` when the caller holds a PGlite
   * transaction (its lock is then already ours). Check `accepts(sql)` first.
   */
  async query(sql: string, params: unknown[], inTransaction: boolean): Promise<Results> {
    const run = () => this.pg._runExclusiveQuery(() => this.run(sql, params, inTransaction));
    try {
      return await (inTransaction ? run() : this.pg._runExclusiveTransaction(run));
    } catch (err) {
      // A schema change that alters a statement's result columns invalidates it for good
      // ("cached plan must not change result type"): forget it, so the next call prepares it
      // again. The caller sees the error, as with pg, unless it was outside a transaction,
      // where retrying once is safe.
      if ((err as { code?: string }).code === '0A000' && this.statements.delete(sql) && !inTransaction) {
        return this.query(sql, params, inTransaction);
      }
      throw err;
    }
  }

  private async run(sql: string, params: unknown[], inTransaction: boolean): Promise<Results> {
    const pg = this.pg;
    const messages = [];
    try {
      let st = this.statements.get(sql);
      if (!st) {
        const name = `ph_${nextName++}`;
        await pg.execProtocolStream(serialize.parse({ name, text: sql }), NO_SYNC);
        const described = await pg.execProtocolStream(serialize.describe({ type: 'S', name }), NO_SYNC);
        st = { name, paramTypes: parse.parseDescribeStatementResults(described) };
        this.statements.set(sql, st);
      }
      const types = st.paramTypes;
      const values = params.map((v, i) => {
        if (v === null || v === undefined) return null;
        const serializer = pg.serializers[types[i]!];
        return serializer ? serializer(v) : String(v);
      });
      messages.push(...(await pg.execProtocolStream(serialize.bind({ statement: st.name, values }), NO_SYNC)));
      messages.push(...(await pg.execProtocolStream(serialize.describe({ type: 'P' }), NO_SYNC)));
      messages.push(...(await pg.execProtocolStream(serialize.execute({}), NO_SYNC)));
    } finally {
      messages.push(...(await pg.execProtocolStream(serialize.sync(), NO_SYNC)));
    }
    if (!inTransaction) await pg.syncToFs();
    return parse.parseResults(messages, pg.parsers)[0]!;
  }
}
