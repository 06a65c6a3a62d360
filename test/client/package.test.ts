import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { type LocalRegistry, packClient, startLocalRegistry } from '../helpers/local-registry.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { makeKeys } from './support.js';

/**
 * Issue 24, done when: a new project outside the repository installs @pricehound/client from
 * `npm pack`, creates products, listings and a rule, receives a verified `alert.triggered` on a
 * webhook receiver on 127.0.0.1, and its code needs no casts for event data (tsc checks it).
 * npm installs from a registry on 127.0.0.1 holding the packages this checkout has installed
 * (test/helpers/local-registry.ts): nothing leaves the machine.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
const T = { timeout: 240_000 };

/** The new project's code, as an integrator would write it: no `as`, no `any`. */
const MAIN = `import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type Event, type EventOf, verifyWebhook } from '@pricehound/client';

const ph = createClient({ baseUrl: process.env.BASE ?? '', apiKey: process.env.PRICEHOUND_KEY ?? '' });

// A receiver on 127.0.0.1 that verifies each delivery and hands over the first alert.
let secret = '';
let resolveAlert: (e: EventOf<'alert.triggered'>) => void = () => undefined;
const alerted = new Promise<EventOf<'alert.triggered'>>((resolve) => (resolveAlert = resolve));
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    verifyWebhook(secret, Buffer.concat(chunks), req.headers).then(
      (event: Event) => {
        res.writeHead(204).end();
        if (event.type === 'alert.triggered') resolveAlert(event);
      },
      () => res.writeHead(400).end(),
    );
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = \`http://127.0.0.1:\${(receiver.address() as AddressInfo).port}\`;

const hook = await ph.POST('/api/v1/webhooks', { body: { url: \`\${receiverUrl}/hooks\`, event_types: ['alert.triggered'] } });
secret = hook.secret;

const created = await ph.createProducts([
  { name: 'Kettle', sku: 'KT-1', base_price: 39.99, currency: 'EUR' },
  { name: 'Toaster', sku: 'TO-1', base_price: 29.99, currency: 'EUR' },
]);
const products = created.data.flatMap((item) => (item.status === 201 ? [item.product] : []));
const kettle = products.find((p) => p.sku === 'KT-1');
if (!kettle) throw new Error('the kettle was not created');
const rival = await ph.POST('/api/v1/competitors', { body: { name: 'Rival', website: 'https://rival.example' } });
const listing = await ph.POST('/api/v1/listings', { body: { product_id: kettle.id, competitor_id: rival.id, url: \`\${receiverUrl}/kettle\` } });
const rule = await ph.POST('/api/v1/alerts', { body: { name: 'Kettle under 35', product_id: kettle.id, condition: { type: 'price_below', threshold: 35 } } });
await ph.POST('/api/v1/prices', { body: { observations: [{ product_id: kettle.id, competitor_id: rival.id, listing_id: listing.id, price: 33.5, currency: 'EUR' }] } });

const event = await alerted;
// Typed from the OpenAPI document: no casts. Were data a bag of unknowns, these would not compile.
const alertId: string = event.data.alert_id;
const price: number | undefined = event.data.current?.price;
const message: string = event.data.message;
let pages = 0;
for await (const page of ph.pages('/api/v1/products', { params: { query: { limit: 1 } } })) pages += page.length;
console.log(JSON.stringify({ type: event.type, alertId, ruleId: rule.id, price, message, listingId: listing.id, products: products.length, pages }));
receiver.close();
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    outDir: 'out',
    types: ['node'],
    skipLibCheck: false,
  },
  include: ['main.ts', 'wrong.ts'],
};

/** MAIN with event data used as the wrong type: tsc must refuse it, or the check proves nothing. */
const WRONG = MAIN.replace(
  'const alertId: string = event.data.alert_id;',
  'const alertId: number = event.data.alert_id;',
);
/** The line of WRONG (1-based) that tsc must report. */
const WRONG_LINE = WRONG.split('\n').findIndex((l) => l.includes('const alertId: number')) + 1;

/** tsc's diagnostics (`--pretty false`): `file(line,col): error TSnnnn: message`. */
const diagnostics = (out: string) =>
  out
    .split('\n')
    .map((l) => /^(.+?)\((\d+),\d+\): error (TS\d+):/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ file: m[1]!, line: Number(m[2]), code: m[3]! }));

describe('@pricehound/client from npm pack, in a project outside the repository', () => {
  let registry: LocalRegistry;
  let storage: TestStorage;
  let server: ServerProcess;
  let key: string;
  let project: string;
  let tarball: string;
  const npm = (args: string[], cwd = project) =>
    run('npm', args, { cwd, env: { ...process.env, ...registry.env }, maxBuffer: 16 * 1024 * 1024 });
  /**
   * The project's tsc on main.ts and wrong.ts in one program (checking @types/node and the
   * client's declarations is most of a run's ~12 CPU-s: paid once for both files). Run with the
   * project's own compiler (node_modules/.bin/tsc is what `npm exec tsc` runs).
   */
  let typeCheck: { code: number; stdout: string } | undefined;

  before(async () => {
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-client-project-'));
    assert.ok(path.relative(ROOT, project).startsWith('..'), 'outside the repository');
    registry = await startLocalRegistry(['openapi-fetch', 'typescript', '@types/node']);
    storage = await testStorage();
    key = (await makeKeys(storage, ['free']))[0]!;
    server = await spawnServer({
      ...storage.env,
      ALLOW_LOOPBACK_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '100,100,100',
      WEBHOOK_RETRY_JITTER_PERCENT: '0',
    });
  });
  after(async () => {
    await server?.stop();
    await storage?.cleanup();
    await registry?.close();
    if (project) fs.rmSync(project, { recursive: true, force: true });
  });

  it('packs its compiled code and types (built by prepack), and nothing of its sources', T, async () => {
    tarball = await packClient(project);
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout
      .trim()
      .split('\n')
      .map((f) => f.replace(/^package\//, ''));
    for (const f of [
      'package.json',
      'README.md',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/events.d.ts',
      'dist/openapi.d.ts',
      'dist/csv.js',
    ])
      assert.ok(files.includes(f), `${f} in ${files.join(', ')}`);
    assert.deepEqual(
      files.filter((f) => f.startsWith('src/') || f.endsWith('.ts.map') || f.endsWith('.js.map')),
      [],
    );
  });

  it(
    "installs from the tarball, type-checks the integrator's code without casts, and gets a verified alert.triggered",
    T,
    async () => {
      fs.writeFileSync(
        path.join(project, 'package.json'),
        JSON.stringify({ name: 'integrator', private: true, type: 'module' }),
      );
      await npm(['install', tarball, 'typescript', '@types/node@20']);
      const installed = JSON.parse(
        fs.readFileSync(path.join(project, 'node_modules/@pricehound/client/package.json'), 'utf8'),
      ) as { version: string };
      assert.equal(installed.version, '0.1.0');
      fs.writeFileSync(path.join(project, 'main.ts'), MAIN);
      fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG));
      const casts = MAIN.split('\n').filter(
        (l) => /\bas\b|<any>|: any\b/.test(l) && /event|data|item|product/i.test(l),
      );
      assert.deepEqual(casts, [], 'no casts of event data, batch items or products');
      fs.writeFileSync(path.join(project, 'wrong.ts'), WRONG);
      const tsc = path.join(project, 'node_modules/typescript/bin/tsc');
      typeCheck = await run(process.execPath, [tsc, '-p', '.', '--pretty', 'false'], {
        cwd: project,
        maxBuffer: 16 * 1024 * 1024,
      }).then(
        ({ stdout }) => ({ code: 0, stdout }),
        (err: { code?: number; stdout?: string }) => ({ code: err.code ?? -1, stdout: err.stdout ?? '' }),
      );
      // Every error is wrong.ts's: main.ts (and the client's declarations, skipLibCheck off) type-check.
      assert.deepEqual(
        typeCheck.stdout.split('\n').filter((l) => /error TS\d+/.test(l) && !l.startsWith('wrong.ts(')),
        [],
        typeCheck.stdout,
      );
      assert.ok(fs.existsSync(path.join(project, 'out/main.js')), 'main.ts compiled');

      const { stdout } = await run(process.execPath, ['out/main.js'], {
        cwd: project,
        env: { PATH: process.env.PATH, BASE: server.url, PRICEHOUND_KEY: key! },
        timeout: 60_000,
      });
      const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
      assert.equal(result.type, 'alert.triggered');
      assert.match(String(result.alertId), /^alrt_/);
      assert.equal(result.alertId, result.ruleId);
      assert.equal(result.price, 33.5);
      assert.equal(result.products, 2);
      assert.equal(result.pages, 2, 'pagination with the page size the caller chose (1)');
      assert.match(String(result.listingId), /^lst_/);
    },
  );

  it('fails to type-check when event data is used as the wrong type: the check is real', T, () => {
    assert.ok(typeCheck, 'the type check ran (previous test)');
    // tsc exits 2: errors found (outputs generated).
    assert.equal(typeCheck.code, 2, typeCheck.stdout);
    assert.deepEqual(
      diagnostics(typeCheck.stdout),
      [{ file: 'wrong.ts', line: WRONG_LINE, code: 'TS2322' }],
      typeCheck.stdout,
    );
  });

  it('runs in browsers: its code bundles for the browser without a Node module', T, async () => {
    const out = await build({
      stdin: { contents: "export * from '@pricehound/client';", resolveDir: project },
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
    assert.equal(out.errors.length, 0);
    const code = out.outputFiles[0]!.text;
    assert.doesNotMatch(code, /from ["']node:|require\(["'](node:)?(crypto|http|fs|buffer)["']\)/);
  });
});
