// `node --import tsx bench/webhooks-partition-key.ts` (BENCH_PG_URL, default ph_pkbench, which it fills; DAYS=90):
// the delivery worker's updates of an attempt by id alone against by id and partition key
// (event_created_at), on webhook_deliveries with a partition per day for DAYS days, 200 deliveries
// a day. Prints EXPLAIN ANALYZE of each and the wall time per update, interleaved rounds.
import { openPostgres } from '../src/db/postgres.js';
import { migrate } from '../src/db/migrate.js';
import { ensurePartitions } from '../src/db/partitions.js';
import { EVENT_PARTITIONS } from '../src/events/partitions.js';
const url = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/ph_pkbench';
const db = await openPostgres(url);
await migrate(db);
const DAYS = Number(process.env.DAYS ?? 90);
const now = Date.now();
for (let i = 0; i <= DAYS; i++) await ensurePartitions(db, EVENT_PARTITIONS, new Date(now - i * 86400_000), 0);
await db.query(`insert into accounts (id, name) values ('acc_1','x') on conflict do nothing`);
await db.query(
  `insert into webhook_endpoints (id, account_id, url, secret) values ('wh_1','acc_1','http://127.0.0.1:9/','whsec_x') on conflict do nothing`,
);
await db.exec(`delete from webhook_deliveries; delete from events`);
// 200 events per day, each with a delivery
await db.query(`insert into events (id, account_id, type, data, created_at)
  select 'evt_' || d || '_' || n, 'acc_1', 'product.updated', '{}', now() - make_interval(days => d) + make_interval(secs => n)
    from generate_series(0, ${DAYS - 1}) d, generate_series(1, 200) n`);
await db.query(`insert into webhook_deliveries (id, account_id, endpoint_id, event_id, event_seq, event_created_at, attempt, trigger, retry, next_attempt_at)
  select 'whdl_' || e.id, 'acc_1', 'wh_1', e.id, row_number() over (order by e.created_at), e.created_at, 1, 'scheduled', 0, now() from events e`);
await db.query('analyze');
const rows = (
  await db.query<{ id: string; k: string }>(
    `select id, event_created_at::text as k from webhook_deliveries order by random() limit 400`,
  )
).rows;
const byId = `/* a */ update webhook_deliveries set attempted_at = now() where id = $1 and status = 'pending'`;
const byKey = `/* b */ update webhook_deliveries set attempted_at = now() where id = $1 and event_created_at = $2 and status = 'pending'`;
const times: Record<string, number[]> = { id: [], key: [] };
for (let round = 0; round < 8; round++) {
  for (const mode of round % 2 ? ['key', 'id'] : ['id', 'key']) {
    const t0 = process.hrtime.bigint();
    for (const r of rows.slice(0, 200))
      await db.query(mode === 'id' ? byId : byKey, mode === 'id' ? [r.id] : [r.id, r.k]);
    times[mode]!.push(Number(process.hrtime.bigint() - t0) / 1e6 / 200);
  }
}
const ex = async (sql: string, p: unknown[]) => {
  const plan = (await db.query<{ 'QUERY PLAN': string }>('explain (analyze, buffers) ' + sql, p)).rows.map(
    (r) => r['QUERY PLAN'],
  );
  return plan
    .filter((l) => /Planning Time|Execution Time/.test(l))
    .map((l) => l.trim())
    .concat(`partitions read: ${plan.filter((l) => /Scan .* on webhook_deliveries_p/.test(l)).length}`)
    .join(' | ');
};
console.log('by id   ', await ex(byId, [rows[0]!.id]));
console.log('by key  ', await ex(byKey, [rows[0]!.id, rows[0]!.k]));
for (const [k, v] of Object.entries(times))
  console.log(k, 'ms/update per round:', v.map((x) => x.toFixed(3)).join(' '));
console.log('id/key per round:', times.id!.map((x, i) => (x / times.key![i]!).toFixed(2)).join(' '));
await db.close();
