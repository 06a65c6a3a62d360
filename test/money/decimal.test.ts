import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  compareDecimals,
  decimalFromMinorUnits,
  decimalFromNumber,
  decimalFromPlainString,
  isZeroDecimal,
  makeDecimal,
} from '../../src/money/decimal.js';

function value(r: { ok: true; value: string } | { ok: false; reason: string }): string {
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return r.value;
}

describe('exact decimals', () => {
  it('turns JSON numbers into their shortest decimal text, without float artefacts', () => {
    assert.equal(value(decimalFromNumber(19.99)), '19.99');
    assert.equal(value(decimalFromNumber(0.3)), '0.3');
    assert.equal(decimalFromNumber(0.1 + 0.2).ok, false, '0.30000000000000004 is refused, not rounded');
    assert.equal(value(decimalFromNumber(1299)), '1299');
    assert.equal(value(decimalFromNumber(1e-4)), '0.0001');
    assert.equal(value(decimalFromNumber(1.5e3)), '1500');
    assert.equal(decimalFromNumber(1e-7).ok, false);
    assert.equal(decimalFromNumber(-1).ok, false);
    assert.equal(decimalFromNumber(Number.NaN).ok, false);
    assert.equal(decimalFromNumber(1e21).ok, false);
  });

  it('turns Shopify cents into a decimal', () => {
    assert.equal(value(decimalFromMinorUnits(129900)), '1299.00');
    assert.equal(value(decimalFromMinorUnits(5)), '0.05');
    assert.equal(value(decimalFromMinorUnits('15900')), '159.00');
    assert.equal(value(decimalFromMinorUnits(1299, 0)), '1299');
    assert.equal(decimalFromMinorUnits(12.5).ok, false);
    assert.equal(decimalFromMinorUnits(-100).ok, false);
  });

  it('normalises leading zeros and caps the scale at four places', () => {
    assert.equal(value(makeDecimal('007', '50')), '7.50');
    assert.equal(value(makeDecimal('1', '230000')), '1.2300');
    assert.equal(makeDecimal('1', '23456').ok, false);
    assert.equal(makeDecimal('123456789012', '').ok, false);
    assert.equal(value(decimalFromPlainString(' 19.99 ')), '19.99');
    assert.equal(decimalFromPlainString('19,99').ok, false);
  });

  it('compares numerically, not as strings', () => {
    assert.equal(compareDecimals('19.9', '19.90'), 0);
    assert.equal(compareDecimals('9.99', '10'), -1);
    assert.equal(compareDecimals('100', '99.999'), 1);
    assert.equal(compareDecimals('0.05', '0.5'), -1);
    assert.ok(isZeroDecimal('0.00'));
    assert.ok(!isZeroDecimal('0.01'));
  });
});
