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
/**
 * Free space below which the run keeps to the temporary directory: a few files' databases live at
 * once, 44 MB each and more as their tests write (a container's /dev/shm is often 64 MiB).
 */
const MIN_FREE = 2 * 2 ** 30;

/** A new directory for this run on a writable tmpfs with room, or undefined (then os.tmpdir()). */
export function makeTestDataRoot(shm = '/dev/shm') {
  try {
    const fsInfo = fs.statfsSync(shm);
    if (fsInfo.type !== TMPFS_MAGIC || fsInfo.bavail * fsInfo.bsize < MIN_FREE) return undefined;
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
