import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { FastifySchemaCompiler } from 'fastify';
import { isCurrency } from '../money/currency.js';
import { isMoney } from '../money/decimal.js';
import { type ErrorDetail } from './errors.js';
import { LABEL_PATTERN, LABEL_RULE, NO_NUL, NOT_BLANK } from './fields.js';

// ajv-formats ships CJS; under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

const rfc3339 = fullFormats['date-time'] as { validate: (s: string) => boolean };

/**
 * RFC 3339 date-time (ajv-formats' check), minus year 0000: RFC 3339 allows it, PostgreSQL
 * does not ("date/time field value out of range"), and it would fail there as a 500.
 */
export function isDateTime(value: string): boolean {
  return rfc3339.validate(value) && !value.startsWith('0000');
}

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes,
    removeAdditional: false,
    useDefaults: true,
    strict: false,
    messages: true,
    // `oneOf` + `discriminator` (an alert's condition): only the variant the tag names is checked.
    discriminator: true,
  });
  addFormats(ajv);
  ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
  ajv.addFormat('money', { type: 'number', validate: isMoney });
  ajv.addFormat('percent', { type: 'number', validate: isMoney });
  ajv.addFormat('iso4217', { type: 'string', validate: isCurrency });
  return ajv;
}

// Bodies are never coerced ("19.99" is not a number); query strings and params are text by nature.
const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

const cache = new WeakMap<object, ValidateFunction>();

export function compileBodyValidator(schema: object): ValidateFunction {
  let v = cache.get(schema);
  if (!v) {
    v = bodyAjv.compile(schema);
    cache.set(schema, v);
  }
  return v;
}

// Numbers in a query string or path must be written as numbers. ajv's coercion alone takes
// anything JavaScript's Number() does: " 5", "0x10", "1e2" as a limit.
const INTEGER_TEXT = /^-?\d+$/;
const NUMBER_TEXT = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** Top-level properties of an object schema that are numbers, with the text each must match. */
function numericProperties(schema: object): [string, RegExp, string][] {
  const props = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.entries(props).flatMap(([name, s]): [string, RegExp, string][] =>
    s.type === 'integer'
      ? [[name, INTEGER_TEXT, 'integer']]
      : s.type === 'number'
        ? [[name, NUMBER_TEXT, 'number']]
        : [],
  );
}

/**
 * Each route's validators are compiled the first time a request reaches them, not when the app
 * starts (as its serializers: src/http/lazy-serializer.ts): most processes call few routes.
 */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  let validate: ValidateFunction | undefined;
  let numeric: [string, RegExp, string][] = [];
  return (data: unknown) => {
    if (!validate) {
      validate = httpPart === 'body' ? compileBodyValidator(schema) : textAjv.compile(schema);
      numeric = httpPart === 'body' ? [] : numericProperties(schema);
    }
    const textErrors: ErrorObject[] = [];
    for (const [name, re, type] of numeric) {
      const v = (data as Record<string, unknown> | null)?.[name];
      if (typeof v === 'string' && !re.test(v)) {
        textErrors.push({
          keyword: 'type',
          instancePath: `/${name}`,
          schemaPath: '',
          params: { type },
          message: `must be ${type}`,
        });
      }
    }
    if (validate(data) && textErrors.length === 0) return { value: data };
    const err = Object.assign(new Error('validation failed'), {
      validation: [...textErrors, ...(validate.errors ?? [])],
    });
    return { error: err };
  };
};

function fieldPath(instancePath: string, prefix: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let out = prefix;
  for (const p of parts) out = /^\d+$/.test(p) ? `${out}[${p}]` : out ? `${out}.${p}` : p;
  return out;
}

/** Echoed input cut to `max` characters (code points, as the Error schema counts them). */
function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

function describe(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'type':
      return `must be ${p.type === 'integer' ? 'an integer' : `of type ${String(p.type).replace(',', ' or ')}`}`;
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'format':
      if (p.format === 'money') return 'must be an amount with at most 4 decimal places';
      if (p.format === 'percent') return 'must be a number with at most 4 decimal places';
      if (p.format === 'iso4217') return 'must be an ISO 4217 currency code such as USD or EUR';
      if (p.format === 'uri') return 'must be an absolute URL';
      if (p.format === 'date-time') return 'must be an RFC 3339 date-time such as 2026-01-31T12:00:00Z';
      return `must be a valid ${String(p.format)}`;
    case 'discriminator':
      return p.error === 'mapping'
        ? `"${clip(String(p.tagValue), 100)}" is not one of the accepted values`
        : 'is required and must be a string';
    case 'minLength':
      return Number(p.limit) === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'pattern':
      if (p.pattern === NOT_BLANK) return 'must not be blank or contain NUL characters';
      if (p.pattern === NO_NUL) return 'must not contain NUL characters';
      if (p.pattern === LABEL_PATTERN) return `must be ${LABEL_RULE}`;
      if (String(p.pattern).includes('[Hh][Tt][Tt][Pp]')) return 'must be an http or https URL naming a host';
      return 'has an invalid format';
    default:
      return e.message ?? 'is invalid';
  }
}

/**
 * Ajv errors -> field-level details, one per field (the first, most basic problem wins).
 * `anyOf` noise from nullable fields is dropped in favour of the concrete branch error.
 */
export function toDetails(errors: ErrorObject[], prefix = ''): ErrorDetail[] {
  const seen = new Map<string, ErrorDetail>();
  for (const e of errors) {
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const p = e.params as Record<string, unknown>;
    let field = fieldPath(e.instancePath, prefix);
    if (e.keyword === 'required') field = field ? `${field}.${String(p.missingProperty)}` : String(p.missingProperty);
    if (e.keyword === 'discriminator') field = field ? `${field}.${String(p.tag)}` : String(p.tag);
    if (e.keyword === 'additionalProperties')
      field = field ? `${field}.${String(p.additionalProperty)}` : String(p.additionalProperty);
    // For a nullable field ("string or null"), the `type: null` branch error adds nothing.
    if (e.keyword === 'type' && p.type === 'null' && seen.has(field)) continue;
    const prev = seen.get(field);
    if (prev && !prev.message.includes('null')) continue;
    // Both can echo the request (a tag value, an unknown key): the Error schema bounds them.
    seen.set(field, { field: clip(field || '(body)', 300), message: clip(describe(e), 1000) });
  }
  return [...seen.values()];
}
