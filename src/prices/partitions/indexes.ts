import type { OnlineIndex } from '../../db/online-indexes.js';

/**
 * The indexes of the observations built online (src/db/online-indexes.ts, docs/SCALING.md
 * "Indexes built online"): declared by their migration, built partition by partition by the
 * background task `indexes`.
 */
export const OBSERVATION_INDEXES: readonly OnlineIndex[] = [
  // migrations/0026: the series index with the columns the trends' edges and the raw history
  // read, so they are read from the index alone; it has the series index's keys.
  { index: 'price_observations_series_cover', replaces: 'price_observations_series_time' },
];
