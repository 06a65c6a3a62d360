import { ERRORS, type ErrorDetail } from '../http/errors.js';
import { isCurrency } from '../money/currency.js';
import { decimalShape, numberToDecimal } from '../money/decimal.js';
import { RATE_DECIMALS, RATE_DIGITS } from './schemas.js';

/**
 * The pair of a path, upper-cased, or a 422 naming each bad part: an unknown code, or the same
 * currency twice (a currency's rate to itself is 1 and cannot be set).
 */
export function currencyPair(params: { base: string; quote: string }): { base: string; quote: string } {
  const details: ErrorDetail[] = [];
  for (const field of ['base', 'quote'] as const) {
    if (!isCurrency(params[field]))
      details.push({ field, message: 'must be an ISO 4217 currency code such as USD or EUR' });
  }
  const base = params.base.toUpperCase();
  const quote = params.quote.toUpperCase();
  if (details.length === 0 && base === quote) details.push({ field: 'quote', message: 'must differ from base' });
  if (details.length > 0) throw ERRORS.validation(details, 'The path names no currency pair');
  return { base, quote };
}

/** The rate as exact decimal text, or a 422 when a double could not carry it exactly. */
export function rateText(rate: number): string {
  const text = numberToDecimal(rate);
  const { decimals, digits } = decimalShape(text);
  if (decimals > RATE_DECIMALS)
    throw ERRORS.validation([{ field: 'rate', message: `must have at most ${RATE_DECIMALS} decimal places` }]);
  if (digits > RATE_DIGITS)
    throw ERRORS.validation([{ field: 'rate', message: `must have at most ${RATE_DIGITS} significant digits` }]);
  return text;
}
