import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { isCurrency } from '../../src/money/currency.js';
import { isMoney } from '../../src/money/decimal.js';
import type { App } from '../../src/app.js';

/** Reading the OpenAPI document in tests (not a test file itself: no `.test.ts`). */

export type Obj = Record<string, unknown>;
export interface Operation extends Obj {
  operationId: string;
  parameters?: Obj[];
  responses: Record<string, Obj>;
  security?: Obj[];
  tags?: string[];
}
export interface Doc extends Obj {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: Record<string, Record<string, Obj>>;
  security?: Obj[];
}

export const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

export async function fetchDocument(app: App): Promise<Doc> {
  const res = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Doc>();
}

export function* operations(doc: Doc): Generator<{ path: string; method: string; op: Operation }> {
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) if (item[method]) yield { path, method, op: item[method] };
  }
}

/** Follows a `$ref` within the document. */
export function deref<T = Obj>(doc: Doc, value: unknown): T {
  let v = value as Obj;
  for (let i = 0; i < 10 && typeof v?.$ref === 'string'; i++) {
    const ref = v.$ref as string;
    assert.ok(ref.startsWith('#/'), `only local refs: ${ref}`);
    v = ref
      .slice(2)
      .split('/')
      .map((p) => decodeURIComponent(p.replace(/~1/g, '/').replace(/~0/g, '~')))
      .reduce<Obj>((o, key) => {
        assert.ok(o && key in o, `dangling $ref ${ref}`);
        return o[key] as Obj;
      }, doc);
  }
  return v as T;
}

/** Authenticated unless the operation (or, without one, the document) says `security: []`. */
export const needsKey = (doc: Doc, op: Operation) => (op.security ?? doc.security ?? []).length > 0;

/** A Fastify route URL (`/products/:id`) as an OpenAPI path (`/products/{id}`). */
export const toOpenApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}').replace(/(.)\/$/, '$1');

// ajv-formats ships CJS; under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => Ajv2020;

/**
 * Checks real responses against the document: the status is documented, the body matches the
 * documented schema (JSON Schema 2020-12, as OpenAPI 3.1 says), and the headers match both ways:
 * every documented header that is always sent is there and valid, and every header we care
 * about that is there is documented.
 */
export class Contract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly doc: Doc) {
    addFormats(this.ajv);
    this.ajv.addFormat('money', { type: 'number', validate: isMoney });
    this.ajv.addFormat('percent', { type: 'number', validate: isMoney });
    this.ajv.addFormat('iso4217', { type: 'string', validate: isCurrency });
    this.ajv.addSchema({ ...doc, $id: 'openapi.json' }, 'openapi.json');
  }

  operation(method: string, path: string): Operation {
    const op = this.doc.paths[path]?.[method.toLowerCase()];
    assert.ok(op, `${method} ${path} is not in the document`);
    return op;
  }

  /** Validates against a schema of the document (inline or a `$ref` into its components). */
  validate(schema: unknown, value: unknown, what: string) {
    const key = JSON.stringify(schema);
    let v = this.validators.get(key);
    if (!v) {
      // Local refs point into the document, which ajv knows as openapi.json.
      const absolute = JSON.parse(key.replace(/"\$ref":"#\//g, '"$ref":"openapi.json#/')) as Obj;
      v = this.ajv.compile(absolute);
      this.validators.set(key, v);
    }
    assert.ok(
      v(value),
      `${what}: ${JSON.stringify(value)?.slice(0, 300)} does not match ${key.slice(0, 200)}: ${this.ajv.errorsText(v.errors)}`,
    );
  }

  /** Headers a response may lack although documented: they depend on the request or the path taken. */
  static readonly CONDITIONAL = new Set([
    'idempotent-replayed',
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
  ]);
  /** Response headers that must be documented wherever they are sent. */
  static readonly INTERESTING = [
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
    'x-request-id',
    'retry-after',
    'www-authenticate',
    'allow',
    'etag',
    'location',
    'idempotent-replayed',
    'access-control-allow-origin',
  ];

  check(method: string, path: string, res: LightMyRequestResponse, opts: { always?: string[] } = {}) {
    const what = `${method} ${path} -> ${res.statusCode}`;
    const op = this.operation(method, path);
    const status = String(res.statusCode);
    assert.ok(op.responses[status], `${what}: status not documented (${Object.keys(op.responses).join(', ')})`);
    this.response(deref(this.doc, op.responses[status]), res, what, opts.always ?? []);
  }

  /** Checks against a reusable response (`components.responses[name]`). */
  checkComponent(name: string, res: LightMyRequestResponse) {
    this.response(deref(this.doc, this.doc.components.responses?.[name]), res, name, []);
  }

  private response(response: Obj, res: LightMyRequestResponse, what: string, always: string[]) {
    const content = response.content as Record<string, Obj> | undefined;
    if (content) {
      const [type, media] = Object.entries(content)[0]!;
      assert.ok(
        String(res.headers['content-type']).startsWith(type),
        `${what}: content-type ${res.headers['content-type']}, documented ${type}`,
      );
      this.validate(media.schema, type === 'application/json' ? res.json() : res.body, what);
    } else {
      assert.equal(res.body, '', `${what}: documented without a body`);
    }
    const documented = new Map(
      Object.entries((response.headers ?? {}) as Obj).map(([name, h]) => [name.toLowerCase(), { name, h }]),
    );
    for (const [lower, { name, h }] of documented) {
      const value = res.headers[lower];
      if (value === undefined) {
        // A 409 says Retry-After only when its conflict ends by itself (ERRORS.inProgress: a listing being checked).
        const conditional = Contract.CONDITIONAL.has(lower) || (lower === 'retry-after' && what.endsWith('-> 409'));
        assert.ok(conditional && !always.includes(lower), `${what}: documented header ${name} is missing`);
        continue;
      }
      const schema = deref(this.doc, deref(this.doc, h).schema);
      const typed = schema.type === 'integer' || schema.type === 'number' ? Number(value) : String(value);
      this.validate(schema, typed, `${what}: header ${name}`);
    }
    for (const lower of Contract.INTERESTING) {
      if (res.headers[lower] !== undefined)
        assert.ok(documented.has(lower), `${what}: header ${lower} is sent but not documented`);
    }
  }
}
