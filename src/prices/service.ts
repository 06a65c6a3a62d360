/** The prices area's public face: what checks, the owner channel and others may call. */
export { afterObservations } from './observed.js';
export { rollupPrices, type RollupResult, type SeriesKey } from './rollup/index.js';
export { lockListingSeries } from './series-lock.js';
export { canonicalTimeZone } from './history/params.js';
