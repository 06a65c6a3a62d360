import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The checkout itself. The suite runs from a mirror of it (scripts/test-build.mjs) in which paths
 * from import.meta.url resolve as in the checkout; what must name the real tree (its sources as
 * written, or ../shared beside it) follows the mirror's link to package.json back.
 */
export const CHECKOUT = path.dirname(fs.realpathSync(fileURLToPath(new URL('../../package.json', import.meta.url))));
