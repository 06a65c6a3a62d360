/**
 * `npm run bench:prices-seed`: seeds the prices benchmark's data set (bench/lib/prices-data.ts)
 * on PostgreSQL (database ph_bench_prices, dropped and recreated) and on embedded PGlite (a
 * DATA_DIR under BENCH_PRICES_DIR), unless a complete data set with the same parameters is
 * already there (BENCH_PRICES_RESEED=1 seeds again anyway). Prints and records how long it took
 * and how big it is: bench/results/prices-seed.json (one entry per database, kept across runs).
 *
 * Env: BENCH_DB=pg|pglite|pg,pglite, BENCH_PRICES_* (see bench/lib/prices-data.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { DATABASES, machine, writeResult } from './lib/common.js';
import {
  existingSeed,
  PGLITE_DATA_DIR,
  PRICES_PG_DB,
  type SeedInfo,
  seedParams,
  seedPrices,
} from './lib/prices-data.js';
import { ROOT } from './lib/proc.js';

const RESULT = path.join(ROOT, 'bench/results/prices-seed.json');
const previous = fs.existsSync(RESULT)
  ? (JSON.parse(fs.readFileSync(RESULT, 'utf8')) as { seeds?: Record<string, unknown> })
  : {};
const seeds: Record<string, unknown> = { ...(previous.seeds ?? {}) };
const mib = (b: number) => Math.round(b / 2 ** 20);

for (const kind of DATABASES) {
  const where = kind === 'pg' ? `PostgreSQL database ${PRICES_PG_DB}` : `PGlite ${PGLITE_DATA_DIR}`;
  const have = process.env.BENCH_PRICES_RESEED === '1' ? undefined : await existingSeed(kind);
  let info: SeedInfo;
  if (have) {
    console.log(
      `${where}: already seeded ${have.seededAt} (${have.observations.toLocaleString('en')} observations); BENCH_PRICES_RESEED=1 to seed again`,
    );
    info = have;
  } else {
    console.log(`${where}: seeding ${JSON.stringify(seedParams(kind))}`);
    info = await seedPrices(kind);
    seeds[kind] = { machine: machine(), ...info };
  }
  console.log(
    `${where}: ${info.observations.toLocaleString('en')} observations (${info.series} series, ${info.priceChanges.toLocaleString('en')} changes) ` +
      `in ${info.seconds.total} s (load ${info.seconds.load_observations} s at ${info.rowsPerSecondLoad.toLocaleString('en')} rows/s); ` +
      `database ${mib(info.sizeBytes.database)} MiB, price_observations ${mib(info.sizeBytes.observations)} MiB` +
      (info.sizeBytes.dataDirOnDisk ? `, DATA_DIR ${mib(info.sizeBytes.dataDirOnDisk)} MiB on disk` : '') +
      `; seeding process RSS peak ${info.seedRssPeakMiB} MiB`,
  );
}
writeResult('prices-seed', { seeds });
