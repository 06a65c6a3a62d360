// Where the test suite's embedded databases live (test/helpers/database.ts, testStorage): a
// directory of this run's own on a tmpfs (/dev/shm) when the machine has one, removed after the
// run. Each test file copies the 44 MB, 1 369-file migrated template there and opens it; on ext4
// the copy cost 0.1-0.6 CPU-s of kernel time (block allocation, the journal, dirty pages) and the
// removal ~0.09, on tmpfs ~0.05 and ~0.03 (docs/BENCHMARKS.md, "The test suite's CPU"). Only
// the tests' throwaway copies go there: the template and every other file stay where they were.
import fs from 'node:fs';
import path from 'node:path';
import { removeStaleTrees } from './test-build.mjs';

const TMPFS_MAGIC = 0x01021994;
const PREFIX = 'ph-tests-';

/** A new directory for this run on a writable tmpfs, or undefined (then os.tmpdir() as before). */
export function makeTestDataRoot(shm = '/dev/shm') {
  try {
    if (fs.statfsSync(shm).type !== TMPFS_MAGIC) return undefined;
    // Those of runs killed before they could remove their own (tmpfs is memory).
    removeStaleTrees(shm, PREFIX);
    const dir = path.join(shm, `${PREFIX}${process.pid}`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { mode: 0o700 });
    return dir;
  } catch {
    return undefined; // no /dev/shm, not writable, or no statfs: the default temporary directory
  }
}
