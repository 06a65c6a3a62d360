import { ErrorBodySchema, errorResponse, everyResponseHeaders } from '../http/schemas.js';
import { allowHeader } from './headers.js';
import { OPTIONAL_BODY } from './operation.js';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const sortKeys = <T>(o: Record<string, T>) =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const plain = (v: unknown) => JSON.parse(JSON.stringify(v)) as Obj;
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** A header definition of src/http/schemas.ts (JSON Schema plus description) as an OpenAPI Header Object. */
function headerObject(def: object): Obj {
  const { description, ...schema } = def as Obj;
  return description === undefined ? { schema } : { schema, description };
}

/**
 * The 405 answer of src/http/not-found.ts. OpenAPI has no place for "any method a path does not
 * list", so it is a reusable response that the operations do not reference (docs/OPENAPI.md).
 */
function methodNotAllowed(): Obj {
  const r = errorResponse(405, { ...allowHeader, ...everyResponseHeaders }) as unknown as Obj & {
    headers: Obj;
    examples: unknown[];
  };
  return {
    description:
      'A path of this document called with a method it does not list (before authentication). ' +
      '`Allow` lists the methods the path supports; every GET path also supports HEAD.',
    headers: Object.fromEntries(Object.entries(r.headers).map(([name, def]) => [name, headerObject(def as object)])),
    content: { 'application/json': { schema: plain(ErrorBodySchema), example: r.examples[0] } },
  };
}

/** Child schemas of a JSON Schema 2020-12 schema, as [container, key] slots that can be replaced. */
function* childSlots(s: Obj): Generator<[Obj | unknown[], string | number]> {
  for (const key of ['properties', 'patternProperties', '$defs', 'dependentSchemas']) {
    const map = s[key];
    if (isObj(map)) for (const name of Object.keys(map)) yield [map, name];
  }
  for (const key of [
    'items',
    'additionalProperties',
    'not',
    'if',
    'then',
    'else',
    'contains',
    'propertyNames',
    'unevaluatedItems',
    'unevaluatedProperties',
  ]) {
    if (isObj(s[key])) yield [s, key];
  }
  for (const key of ['prefixItems', 'anyOf', 'oneOf', 'allOf']) {
    const list = s[key];
    if (Array.isArray(list)) for (let i = 0; i < list.length; i++) yield [list, i];
  }
}

/**
 * An integer `enum` also gets the `minimum` and `maximum` it implies. That changes nothing about
 * the values allowed, but states the bounds where tools look for them (OWASP API4).
 */
function boundEnum(s: Obj) {
  const values = s.enum;
  if (
    s.type !== 'integer' ||
    !Array.isArray(values) ||
    values.length === 0 ||
    !values.every((v) => typeof v === 'number')
  )
    return;
  s.minimum ??= Math.min(...(values as number[]));
  s.maximum ??= Math.max(...(values as number[]));
}

/**
 * Moves every schema with a `title` (Product, Error, RateLimitExceeded, ...) into
 * `components.schemas` under that title and leaves a `$ref`, so that client generators name the
 * types and the document states each shape once. Two different schemas with one title are a bug
 * in the route schemas and fail loudly (the tests build this document).
 */
class SchemaHoister {
  readonly schemas: Record<string, Obj> = {};
  private readonly texts = new Map<string, string>();

  /** `container` is the response or request body whose description @fastify/swagger copied into the schema. */
  top(schema: unknown, containerDescription?: unknown): unknown {
    if (isObj(schema) && typeof schema.title === 'string' && schema.description === containerDescription) {
      const { description: _ignored, ...rest } = schema;
      return this.walk(rest);
    }
    return this.walk(schema);
  }

  walk(schema: unknown): unknown {
    if (!isObj(schema)) return schema;
    const copy: Obj = { ...schema };
    for (const key of ['properties', 'patternProperties', '$defs', 'dependentSchemas'])
      if (isObj(copy[key])) copy[key] = { ...copy[key] };
    for (const key of ['prefixItems', 'anyOf', 'oneOf', 'allOf'])
      if (Array.isArray(copy[key])) copy[key] = [...(copy[key] as unknown[])];
    for (const [container, key] of childSlots(copy)) {
      (container as Record<string | number, unknown>)[key] = this.walk(
        (container as Record<string | number, unknown>)[key],
      );
    }
    boundEnum(copy);
    this.mapDiscriminator(copy);
    if (typeof copy.title !== 'string') return copy;
    const name = copy.title;
    const text = JSON.stringify(copy);
    const seen = this.texts.get(name);
    if (seen === undefined) {
      this.texts.set(name, text);
      this.schemas[name] = copy;
    } else if (seen !== text) {
      throw new Error(`OpenAPI: two different schemas are titled "${name}"; give one of them another title`);
    }
    return { $ref: `#/components/schemas/${encodeURIComponent(name)}` };
  }

  /**
   * A `discriminator` without `mapping` means, in OpenAPI, that the tag's value is the variant's
   * component name (`Condition_price_below`), so generators type it so. Ours are each variant's
   * one value (`const`, or an `enum` of one): state it. Ajv refuses `mapping` in the validation schemas, hence here.
   */
  private mapDiscriminator(s: Obj) {
    const d = s.discriminator;
    if (!isObj(d) || typeof d.propertyName !== 'string' || d.mapping !== undefined || !Array.isArray(s.oneOf)) return;
    const mapping: Record<string, string> = {};
    for (const v of s.oneOf) {
      const ref = isObj(v) && typeof v.$ref === 'string' ? v.$ref : undefined;
      const variant =
        ref === undefined ? undefined : this.schemas[decodeURIComponent(ref.slice(ref.lastIndexOf('/') + 1))];
      const props = variant?.properties;
      const tag: unknown = isObj(props) ? props[d.propertyName] : undefined;
      const value = !isObj(tag)
        ? undefined
        : (tag.const ?? (Array.isArray(tag.enum) && tag.enum.length === 1 ? tag.enum[0] : undefined));
      if (typeof value !== 'string') return;
      mapping[value] = ref!;
    }
    s.discriminator = { ...d, mapping };
  }
}

/**
 * Replaces objects that occur identically in many places (response headers, header parameters)
 * with a `$ref` to one component. A name defined differently in two places stays inline.
 */
class Deduper {
  private readonly variants = new Map<string, Set<string>>();
  private readonly slots: { name: string; holder: Obj; key: string }[] = [];

  constructor(
    private readonly section: string,
    private readonly componentName: (name: string) => string,
  ) {}

  add(name: string, holder: Obj, key: string) {
    const text = JSON.stringify(holder[key]);
    if (!this.variants.has(name)) this.variants.set(name, new Set());
    this.variants.get(name)!.add(text);
    this.slots.push({ name, holder, key });
  }

  components(): Record<string, Obj> {
    const out: Record<string, Obj> = {};
    for (const { name, holder, key } of this.slots) {
      if (this.variants.get(name)!.size !== 1) continue;
      const component = this.componentName(name);
      out[component] ??= holder[key] as Obj;
      holder[key] = { $ref: `#/components/${this.section}/${component}` };
    }
    return out;
  }
}

/**
 * @fastify/swagger `transformObject`: the finishing pass over the whole document (reusable
 * components, the 405 response). Runs once; @fastify/swagger caches the result.
 */
export function finishDocument(doc: Obj): Obj {
  const components: Obj = { ...(isObj(doc.components) ? doc.components : {}) };
  const responsesComponent: Record<string, Obj> = { MethodNotAllowed: methodNotAllowed() };
  const hoister = new SchemaHoister();
  const headers = new Deduper('headers', (name) => name);
  const parameters = new Deduper('parameters', (name) => name.replace(/-/g, ''));

  const responseObjects: Obj[] = Object.values(responsesComponent);
  for (const pathItem of Object.values(isObj(doc.paths) ? doc.paths : {})) {
    if (!isObj(pathItem)) continue;
    for (const method of HTTP_METHODS) {
      const op = pathItem[method];
      if (!isObj(op)) continue;
      for (const param of Array.isArray(op.parameters) ? (op.parameters as Obj[]) : []) {
        param.schema = hoister.walk(param.schema);
      }
      if (Array.isArray(op.parameters)) {
        op.parameters.forEach((param: Obj, i: number) => {
          if (param.in === 'header' && typeof param.name === 'string')
            parameters.add(param.name, op.parameters as unknown as Obj, String(i));
        });
      }
      if (op[OPTIONAL_BODY]) {
        delete op[OPTIONAL_BODY];
        if (isObj(op.requestBody)) op.requestBody.required = false;
      }
      if (isObj(op.requestBody)) {
        for (const media of Object.values(isObj(op.requestBody.content) ? op.requestBody.content : {})) {
          if (isObj(media)) media.schema = hoister.top(media.schema, op.requestBody.description);
        }
      }
      if (isObj(op.responses)) responseObjects.push(...Object.values(op.responses).filter(isObj));
    }
  }
  for (const response of responseObjects) {
    for (const media of Object.values(isObj(response.content) ? response.content : {})) {
      if (isObj(media)) media.schema = hoister.top(media.schema, response.description);
    }
    if (isObj(response.headers)) {
      for (const name of Object.keys(response.headers)) headers.add(name, response.headers, name);
    }
  }

  components.schemas = sortKeys({ ...(isObj(components.schemas) ? components.schemas : {}), ...hoister.schemas });
  components.responses = sortKeys(responsesComponent);
  components.headers = sortKeys(headers.components());
  components.parameters = sortKeys(parameters.components());
  doc.components = components;
  return doc;
}
