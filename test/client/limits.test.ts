import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONDITION_TYPES as SERVER_CONDITION_TYPES } from '../../src/alerts/condition-types.js';
import { BATCH_MAX as SERVER_BATCH_MAX } from '../../src/batches/schemas.js';
import { EVENT_TYPES as SERVER_EVENT_TYPES } from '../../src/events/schemas.js';
import { LimitQuery } from '../../src/pagination/schemas.js';
import { MAX_SPAN_DAYS, RAW_LIMIT_MAX } from '../../src/prices/history/schemas.js';
import {
  BATCH_MAX,
  CONDITION_TYPES,
  EVENT_TYPES,
  HISTORY_MAX_SPAN_DAYS,
  PAGE_SIZE_MAX,
  RAW_PAGE_MAX,
} from '../../clients/typescript/src/index.js';

// What the client (and through it the dashboard and the CLI) knows of the service's limits and
// lists is the service's own: read from the generated types where the document has them as
// values, else kept in clients/typescript/src/limits.ts and checked here.

describe("the client's constants are the service's", () => {
  it('event and condition types come from the document', () => {
    assert.deepEqual([...EVENT_TYPES], [...SERVER_EVENT_TYPES]);
    assert.deepEqual([...CONDITION_TYPES], [...SERVER_CONDITION_TYPES]);
  });

  it('limits.ts says what the service enforces', () => {
    assert.equal(BATCH_MAX, SERVER_BATCH_MAX);
    assert.equal(PAGE_SIZE_MAX, (LimitQuery as unknown as { maximum: number }).maximum);
    assert.equal(RAW_PAGE_MAX, RAW_LIMIT_MAX);
    assert.deepEqual(HISTORY_MAX_SPAN_DAYS, MAX_SPAN_DAYS);
  });
});
