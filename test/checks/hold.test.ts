import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideHold, DEFAULT_HOLD_FACTOR, holdReason, type HoldState } from '../../src/checks/hold.js';

/** The rule of src/checks/hold.ts alone; test/checks/held.test.ts runs it through real checks. */

const state = (s: Partial<HoldState> = {}): HoldState => ({
  last_price: '49.9900',
  last_currency: 'EUR',
  hold_factor: null,
  held_id: null,
  held_price: null,
  held_currency: null,
  held_reason: null,
  held_previous_price: null,
  held_previous_currency: null,
  held_factor: null,
  rejected_price: null,
  rejected_currency: null,
  ...s,
});

describe('holdReason', () => {
  it('holds exactly at the factor, up and down, and not a cent inside it', () => {
    assert.equal(DEFAULT_HOLD_FACTOR, 4);
    assert.equal(holdReason('199.96', 'EUR', '49.99', 'EUR', 4)?.factor, 4, '4 x 49.99');
    assert.equal(holdReason('199.95', 'EUR', '49.99', 'EUR', 4), null);
    assert.equal(holdReason('12.4975', 'EUR', '49.99', 'EUR', 4)?.factor, 4, 'a quarter of 49.99');
    assert.equal(holdReason('12.4976', 'EUR', '49.99', 'EUR', 4), null);
    assert.equal(holdReason('74.985', 'EUR', '49.99', 'EUR', 1.5)?.factor, 1.5, 'a factor with decimals, exactly');
    assert.equal(holdReason('74.9849', 'EUR', '49.99', 'EUR', 1.5), null);
  });

  it('says why for a person: how far, which way, and the factor', () => {
    assert.match(
      holdReason('4999', 'EUR', '49.9900', 'EUR', 4)!.reason,
      /^The price read, 4999 EUR, is 100 times the listing's last recorded price, 49\.99 EUR \(a rise of 9900 %\); readings 4 or more/,
    );
    assert.match(
      holdReason('0.4999', 'EUR', '49.99', 'EUR', 4)!.reason,
      /0\.4999 EUR, is 100 times lower than .* \(a fall of 99 %\)/,
    );
    assert.equal(holdReason('24.99', 'EUR', '49.99', 'EUR', 4), null, 'a half-price sale');
  });

  it('holds another currency whatever the amount, and a 0 next to a price, with factor null', () => {
    const other = holdReason('49.99', 'USD', '49.99', 'EUR', 4)!;
    assert.deepEqual([other.factor, other.previousCurrency], [null, 'EUR']);
    assert.match(other.reason, /another currency/);
    assert.equal(holdReason('0', 'EUR', '49.99', 'EUR', 4)?.factor, null);
    assert.equal(holdReason('49.99', 'EUR', '0.0000', 'EUR', 4)?.factor, null);
    assert.equal(holdReason('0.00', 'EUR', '0', 'EUR', 4), null, '0 after 0 is no change');
  });
});

describe('decideHold', () => {
  it('records a first price, anything with hold_factor 0, and an ordinary change', () => {
    assert.deepEqual(decideHold('4999', 'EUR', state({ last_price: null, last_currency: null })), { kind: 'record' });
    assert.deepEqual(decideHold('4999', 'USD', state({ hold_factor: 0 })), { kind: 'record' });
    assert.deepEqual(decideHold('24.99', 'EUR', state()), { kind: 'record' });
    assert.equal(decideHold('199.96', 'EUR', state({ hold_factor: 5 })).kind, 'record', "the listing's own factor");
  });

  it('holds with a recheck, and confirms the held reading read again (same amount and currency)', () => {
    const held = decideHold('4999', 'EUR', state());
    assert.equal(held.kind, 'hold');
    assert.equal(held.kind === 'hold' && held.recheck, true);
    const waiting = state({
      held_id: '7',
      held_price: '4999.0000',
      held_currency: 'EUR',
      held_reason: 'r',
      held_previous_price: '49.9900',
      held_previous_currency: 'EUR',
      held_factor: 100,
    });
    assert.deepEqual(decideHold('4999.00', 'EUR', waiting), {
      kind: 'confirm',
      heldId: '7',
      hold: { reason: 'r', previousPrice: '49.9900', previousCurrency: 'EUR', factor: 100 },
    });
    assert.equal(decideHold('4999', 'USD', waiting).kind, 'hold', 'another currency is another reading');
    assert.equal(decideHold('4998', 'EUR', waiting).kind, 'hold', 'another far price is held in its place');
    assert.equal(decideHold('49.99', 'EUR', waiting).kind, 'record');
  });

  it('holds a rejected reading again, without a recheck, and never confirms it', () => {
    const rejected = state({ rejected_price: '4999.0000', rejected_currency: 'EUR' });
    const again = decideHold('4999', 'EUR', rejected);
    assert.equal(again.kind, 'hold');
    assert.equal(again.kind === 'hold' && again.recheck, false);
    assert.match(again.kind === 'hold' ? again.hold.reason : '', /100 times.*A person rejected this same reading/);
    const waiting = { ...rejected, held_id: '8', held_price: '4999', held_currency: 'EUR', held_reason: 'r' };
    assert.equal(decideHold('4999', 'EUR', waiting).kind, 'hold', 'read again, still held');
    assert.equal(decideHold('24.99', 'EUR', rejected).kind, 'record', 'another price is recorded as usual');
  });
});
