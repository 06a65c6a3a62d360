/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`, e.g. BENCH_PROFILE=1 npm run bench:api):
 * self time by function, self time by package/file, and total (inclusive) time of the functions
 * matching a pattern.
 *   node --import tsx bench/profile-summary.ts FILE.cpuprofile [TOP=25] [INCLUSIVE_REGEX]
 * PROFILE_AREA=other (or any area's first words) also lists the functions of that area.
 */
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg, inclusiveArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: bench/profile-summary.ts FILE.cpuprofile [TOP] [INCLUSIVE_REGEX]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const self = new Map<number, number>();
prof.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
const all = [...self.values()].reduce((a, b) => a + b, 0);
// Percentages are of busy time: samples in (idle) are left out.
const idle = [...self]
  .filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)')
  .reduce((s, [, us]) => s + us, 0);
const total = all - idle;
for (const [id] of self) if (byId.get(id)!.callFrame.functionName === '(idle)') self.delete(id);

const where = (n: Node) => {
  const url = n.callFrame.url.replace(/^file:\/\//, '');
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.startsWith('node:')) return url;
  if (!url) return `(${n.callFrame.functionName || 'native'})`;
  return url.replace(/^.*?\/(dist|src)\//, '$1/');
};
const label = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${where(n)}:${n.callFrame.lineNumber + 1}`;
const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%`;

function print(title: string, m: Map<string, number>) {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
}

const fnSelf = new Map<string, number>();
const pkgSelf = new Map<string, number>();
for (const [id, us] of self) {
  const n = byId.get(id)!;
  fnSelf.set(label(n), (fnSelf.get(label(n)) ?? 0) + us);
  pkgSelf.set(where(n), (pkgSelf.get(where(n)) ?? 0) + us);
}
console.log(
  `${file}: ${(all / 1e6).toFixed(2)} s sampled, ${(total / 1e6).toFixed(2)} s busy; percentages are of busy time`,
);

// Rough areas of the request path, by where the self time falls (first match wins).
const AREAS: [string, RegExp][] = [
  ['syscall: write to socket or file', /^(writev|writeString|writeUtf8String|writeBuffer|writeLatin1String) /],
  ['garbage collector', /^\(garbage collector\)/],
  [
    'start-up: module loading, schema compilation',
    /modules\/(cjs|esm)|cjs-module-lexer|package_json_reader| ajv:| typebox| @fastify\/swagger|json-schema-ref-resolver|fast-uri|compileSourceTextModule|wrapSafe/,
  ],
  ['logging (pino, log controller)', /pino|sonic-boom|log-controller/],
  ['metrics (prom-client, ops/metrics)', /prom-client|ops\/metrics/],
  ['rate limit (ioredis, limiter)', /ioredis|redis-parser|denque|cluster-key-slot|ratelimit\//],
  ['auth hook, key cache', /dist\/auth\/|src\/auth\//],
  ['ETag (sha1)', /http\/etag/],
  ['request id (randomBytes)', /request-id|crypto\/random/],
  ['crypto hashes (sha1 ETag, sha256 key)', /crypto\/hash|node:crypto/],
  [
    'pg driver',
    /\bpg:|pg-protocol|pg-pool|pg-types|postgres-date|postgres-array|postgres-interval|pgpass|pg-connection-string/,
  ],
  ['PGlite (WASM)', /@electric-sql/],
  [
    'fastify, routing, serialization',
    /fastify|fast-json-stringify|find-my-way|avvio|light-my-request|toad-cache|abstract-logging|fast-querystring|safe-regex2/,
  ],
  [
    'node http, net, streams, events',
    /node:_http|node:net|node:internal\/(stream|streams|http|net|timers|process|url|buffer|util|errors)|node:events|node:buffer|node:timers|node:url|runMicrotasks|processTicksAndRejections|^\(program\)|parserOn|llhttp/,
  ],
  ['our code (dist/ or src/)', /(dist|src)\//],
];
const areas = new Map<string, number>();
const inArea = new Map<string, number>();
const listArea = process.env.PROFILE_AREA; // e.g. PROFILE_AREA=other lists that area's functions
for (const [k, v] of fnSelf) {
  const area = AREAS.find(([, re]) => re.test(k))?.[0] ?? 'other';
  areas.set(area, (areas.get(area) ?? 0) + v);
  if (listArea && area.startsWith(listArea)) inArea.set(k, v);
}
print('self time by area (approximate)', areas);
if (listArea) print(`functions in area "${listArea}"`, inArea);
print('self time by package / file', pkgSelf);
print('self time by function', fnSelf);

// Inclusive time: a sample counts once for each distinct matching function on its stack.
const inclusive = new Map<string, number>();
const pattern = new RegExp(inclusiveArg ?? '.', 'i');
for (const [id, us] of self) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur)!);
    if (!seen.has(l) && pattern.test(l)) {
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + us);
    }
  }
}
print(`total (inclusive) time${inclusiveArg ? ` of functions matching /${inclusiveArg}/` : ''}`, inclusive);
