import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PGlite, types } from '@electric-sql/pglite';
import { PreparedStatements } from '../../src/db/pglite-prepared.js';

// The driver itself, on an in-memory engine with the same parsers as src/db/pglite-worker.ts:
// a prepared statement must answer exactly what PGlite's own query() answers.
describe('PGlite prepared statements', () => {
  let pg: PGlite;
  let ps: PreparedStatements;
  before(async () => {
    pg = await PGlite.create({
      parsers: { [types.INT8]: (v: string) => Number(v), [types.NUMERIC]: (v: string) => v },
    });
    await pg.exec(
      `create table t (id int primary key, name text, price numeric(19,4), at timestamptz, tags text[], doc jsonb, n bigint)`,
    );
    ps = new PreparedStatements(pg, 3);
  });
  after(() => pg.close());

  const insert = 'insert into t (id, name, price, at, tags, doc, n) values ($1, $2, $3, $4, $5, $6, $7) returning *';

  test('answers what query() answers, for every parameter and result type', async () => {
    const at = new Date('2026-03-29T01:30:00.123Z');
    const values = [1, "O'Brien <b>", '19.9900', at, ['a', 'b,c', null], { k: [1, 'x'] }, 9007199254740991];
    const viaPrepared = await ps.query(insert, values, false);
    const viaQuery = await pg.query('select * from t where id = $1', [1]);
    assert.deepEqual(viaPrepared.rows, viaQuery.rows);
    assert.deepEqual(viaPrepared.rows[0], {
      id: 1,
      name: "O'Brien <b>",
      price: '19.9900',
      at,
      tags: ['a', 'b,c', null],
      doc: { k: [1, 'x'] },
      n: 9007199254740991,
    });
    assert.equal(viaPrepared.affectedRows, 1);
    assert.deepEqual((await ps.query(insert, [2, null, null, null, null, null, null], false)).rows[0], {
      id: 2,
      name: null,
      price: null,
      at: null,
      tags: null,
      doc: null,
      n: null,
    });
  });

  test("a failing statement reports PostgreSQL's error and leaves the engine usable", async () => {
    await assert.rejects(ps.query(insert, [1, 'dup', null, null, null, null, null], false), { code: '23505' });
    await assert.rejects(ps.query('select * from nowhere where id = $1', [1], false), { code: '42P01' });
    assert.equal((await ps.query('select count(*)::int as c from t where id > $1', [0], false)).rows[0]!.c, 2);
  });

  test('inside a transaction it uses the transaction, and a rollback undoes its writes', async () => {
    await pg
      .transaction(async () => {
        await ps.query(insert, [3, 'in tx', null, null, null, null, null], true);
        assert.equal((await ps.query('select count(*)::int as c from t where id > $1', [0], true)).rows[0]!.c, 3);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    assert.equal((await pg.query<{ c: number }>('select count(*)::int as c from t')).rows[0]!.c, 2);
  });

  test('keeps at most maxPrepared statements; others are refused by accepts() and run by query() as before', async () => {
    const fresh = new PreparedStatements(pg, 2);
    await fresh.query('select $1::int + 1 as v', [1], false);
    await fresh.query('select $1::int + 2 as v', [1], false);
    assert.equal(fresh.accepts('select $1::int + 1 as v'), true);
    assert.equal(fresh.accepts('select $1::int + 3 as v'), false);
    const names = (await pg.query<{ name: string }>('select name from pg_prepared_statements order by name')).rows.map(
      (r) => r.name,
    );
    assert.ok(names.length >= 2, `prepared: ${names.join(', ')}`);
  });

  test('a statement whose result columns changed is prepared again outside a transaction', async () => {
    const sql = 'select * from t where id = $1';
    assert.equal(Object.keys((await ps.query(sql, [1], false)).rows[0]!).length, 7);
    await pg.exec('alter table t add column extra text');
    const again = await ps.query(sql, [1], false);
    assert.equal(Object.keys(again.rows[0]!).length, 8);
  });
});
