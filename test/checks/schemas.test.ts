import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { Value } from 'typebox/value';
import { CandidateSchema, toCandidateJson, toCheckResult, type CheckRow } from '../../src/checks/schemas.js';
import type { Candidate } from '../../src/extraction/index.js';
import { useIdKey } from '../../src/ids.js';

// toCheckResult writes the check's public id, which needs a key (a runtime loads the deployment's).
useIdKey(crypto.randomBytes(16));

/** The candidate JSON of checks and POST /extract: what the extractor's candidates become. */

const candidate = (extra: Partial<Candidate> = {}): Candidate => ({
  price: '9.99',
  currency: 'USD',
  source: 'selector',
  detail: '.plan-price (text)',
  raw: '$9.99/mo',
  ...extra,
});

describe('candidate JSON', () => {
  it('carries the period of a per-period price, and null for a one-off price', () => {
    const monthly = toCandidateJson(candidate({ period: 'month' }), true);
    assert.equal(monthly.period, 'month');
    assert.ok(Value.Check(CandidateSchema, monthly), 'valid against CandidateSchema');
    const once = toCandidateJson(candidate({ raw: '$9.99' }), true);
    assert.equal(once.period, null);
    assert.ok(Value.Check(CandidateSchema, once));
  });

  it("documents the period as a nullable enum of the extractor's periods", () => {
    const schema = CandidateSchema.properties.period as unknown as { enum: unknown[]; description: string };
    assert.deepEqual(schema.enum, ['day', 'week', 'month', 'year', null]);
    assert.match(schema.description, /per this period/);
    assert.equal(Value.Check(CandidateSchema, { ...toCandidateJson(candidate(), false), period: 'fortnight' }), false);
  });

  it('shows checks stored before candidates had a period with period null', () => {
    const { period: _dropped, ...stored } = toCandidateJson(candidate(), true);
    const row: CheckRow = {
      id: 1,
      listing_id: 'lst_1',
      started_at: new Date('2026-01-01T00:00:00Z'),
      duration_ms: 12,
      ok: true,
      http_status: 200,
      final_url: 'https://shop.example/p',
      price: '9.99',
      currency: 'USD',
      in_stock: null,
      source: 'selector',
      error_code: null,
      error: null,
      candidates: [stored],
      held_reason: null,
      held_previous_price: null,
      held_previous_currency: null,
      held_factor: null,
      read_at: null,
      confirmed_by: null,
      held_resolution: null,
      resolved_at: null,
      held_pending: false,
    };
    const shown = toCheckResult(row).candidates[0];
    assert.equal(shown?.period, null);
    assert.ok(Value.Check(CandidateSchema, shown));
  });
});
