import { listRanges } from '../../db/partitions.js';
import { dropUnpacked, needsPacking, packPartition, type PackResult } from '../../db/pack.js';
import type { Database } from '../../db/types.js';
import { DAY_MS } from '../../time.js';
import { OBSERVATION_PARTITIONS } from './sql.js';

/**
 * The months packed once closed (src/db/pack.ts, docs/SCALING.md "Packed months"): the day rows
 * a year of day buckets reads (migrations/0017) and the trends' blocks (0022). Their rows are
 * written a day or a block at a time for every product, so a product's month lies on up to one
 * page per day and series; packed, on a few. The day rows in the order the history walks them
 * (its index on product, series, day), so each page is visited once; the blocks by their key.
 */
export const PACKED_TABLES: readonly { table: string; column: string; orderBy?: string }[] = [
  { table: 'price_days', column: 'day', orderBy: 'product_id, series, day, currency' },
  { table: 'price_blocks', column: 'block' },
];

/**
 * Packs every month of PACKED_TABLES that ended `afterDays` days or more before `now` and is not
 * packed yet, the latest first (the months read most), one partition per transaction; `stop` is
 * checked between them. Nothing on the embedded engine.
 */
export async function packClosedMonths(
  db: Database,
  now: Date,
  afterDays: number,
  stop: () => boolean = () => false,
): Promise<PackResult[]> {
  if (db.kind !== 'postgres') return [];
  await dropUnpacked(
    db,
    PACKED_TABLES.map((t) => t.table),
  );
  const closedBy = now.getTime() - afterDays * DAY_MS;
  const out: PackResult[] = [];
  for (const { table, column, orderBy } of PACKED_TABLES) {
    const months = (await listRanges(db, 'month', table)).filter((r) => r.to.getTime() <= closedBy).reverse();
    for (const r of months) {
      if (stop()) return out;
      if (!(await needsPacking(db, table, r))) continue;
      const packed = await packPartition(db, OBSERVATION_PARTITIONS, table, column, r, orderBy ? { orderBy } : {});
      if (packed) out.push(packed);
    }
  }
  return out;
}
