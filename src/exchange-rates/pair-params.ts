import { validatorCompiler } from '../http/validation.js';
import { LoosePairParams } from './schemas.js';

/** The URL of one pair's rate (GET, PUT and DELETE). */
export const PAIR_URL = '/exchange-rates/:base/:quote';

// Documented with ISO 4217 codes, validated loosely so a bad code is a 422 naming it (currencyPair)
// rather than the 404 a path parameter's schema failure answers.
export const looseParams = (req: Parameters<typeof validatorCompiler>[0]) =>
  validatorCompiler(req.httpPart === 'params' ? { ...req, schema: LoosePairParams } : req);
