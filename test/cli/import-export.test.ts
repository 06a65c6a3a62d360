import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { cli, createKeyWithCli, lines } from './helpers/cli.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-cli-import-'));

const CSV = [
  'name,base_price,currency,sku,brand,category,description,url,own_price',
  'Kettle 1.7 l,39.99,EUR,KT-1,Bosch,kitchen,"Quiet, fast",https://shop.example/kt-1,35',
  '"Toaster ""Duo""",abc,EUR,TS-2,Krups,kitchen,,,',
  'Blender,89,EURO,BL-3,,,,,',
  '<script>alert(1)</script>,12.50,EUR,XSS-4,,,,,',
  'Kettle copy,10,EUR,KT-1,,,,,',
  "=HYPERLINK(1),5,EUR,F-6,,,,,",
].join('\r\n');

describe('pricehound import products / export, while the server runs', () => {
  let storage: TestStorage;
  let server: ServerProcess;
  let env: Record<string, string>;
  let key: string;
  before(async () => {
    storage = await testStorage();
    server = await spawnServer(storage.env);
    key = (await createKeyWithCli(storage.env, ['--plan', 'business'])).key;
    env = { ...storage.env, PRICEHOUND_KEY: key };
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await storage?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const api = async (p: string) => {
    const res = await fetch(`${server.url}/api/v1${p}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200, p);
    return res.json() as Promise<{ data: Record<string, unknown>[] }>;
  };

  it('imports the good rows, reports the bad ones by row and field, and a re-run changes nothing', async () => {
    const file = path.join(dir, 'products.csv');
    fs.writeFileSync(file, CSV);
    const r = await cli(['import', 'products', file], env);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^columns ignored: own_price$/m);
    assert.match(lines(r.stderr).at(-1)!, /: 6 rows, 3 created, 0 already present \(same SKU\), 3 failed; the errors are in .*products\.csv\.errors\.csv$/);
    const report = parse(fs.readFileSync(`${file}.errors.csv`), { columns: true }) as Record<string, string>[];
    assert.deepEqual(
      report.map((e) => [e.row, e.line, e.sku, e.field]),
      [['2', '3', 'TS-2', 'base_price'], ['3', '4', 'BL-3', 'currency'], ['5', '6', 'KT-1', 'sku']],
    );
    const products = (await api('/products?sort=sku&limit=100')).data;
    assert.deepEqual(products.map((p) => [p.sku, p.name, p.base_price]), [
      ['F-6', '=HYPERLINK(1)', 5],
      ['KT-1', 'Kettle 1.7 l', 39.99],
      ['XSS-4', '<script>alert(1)</script>', 12.5],
    ]);
    assert.equal(products[1]!.description, 'Quiet, fast');

    // The state file says the file is done: nothing is sent again, nothing doubles.
    const again = await cli(['import', 'products', file, '--json'], env);
    assert.equal(again.code, 1, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), {
      rows: 6, created: 3, present: 0, failed: 3, skipped: 6, errors_file: `${file}.errors.csv`, ignored_columns: ['own_price'],
    });
    assert.equal((await api('/products?limit=100')).data.length, 3);

    // --restart sends every row again: the SKUs already there count as present.
    const restart = await cli(['import', 'products', file, '--restart', '--json'], env);
    assert.equal(JSON.parse(restart.stdout).present, 3, restart.stderr);
    assert.equal((await api('/products?limit=100')).data.length, 3);
  });

  it('resumes after the rows an earlier run did', async () => {
    const file = path.join(dir, 'resume.csv');
    const rows = Array.from({ length: 7 }, (_, i) => `Resume ${i},${i + 1},EUR,R-${i}`);
    fs.writeFileSync(file, ['name,base_price,currency,sku', ...rows].join('\n'));
    // As if a run had done the first 4 rows and been killed.
    const first = await cli(['import', 'products', file, '--batch-size', '4', '--json'], env);
    const state = JSON.parse(fs.readFileSync(`${file}.import-state.json`, 'utf8')) as Record<string, unknown>;
    assert.equal(JSON.parse(first.stdout).created, 7);
    fs.writeFileSync(`${file}.import-state.json`, JSON.stringify({ ...state, rows_done: 4, created: 4, complete: false }));
    const resumed = await cli(['import', 'products', file, '--json'], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    // Rows 5-7 went again under the same Idempotency-Key: replayed, not created twice.
    assert.deepEqual(JSON.parse(resumed.stdout), { rows: 7, created: 7, present: 0, failed: 0, skipped: 4, errors_file: null, ignored_columns: [] });
    assert.match(resumed.stderr, /^resuming after row 4/m);
    assert.equal((await api('/products?sku=R-6')).data.length, 1);
    assert.equal(fs.existsSync(`${file}.errors.csv`), false);
  });

  it('refuses a file without the required columns, a missing file and a bad key clearly', async () => {
    const file = path.join(dir, 'bad-header.csv');
    fs.writeFileSync(file, 'title,price\nx,1\n');
    const good = path.join(dir, 'good.csv');
    fs.writeFileSync(good, 'name,base_price,currency\nx,1,EUR\n');
    const cases: [string[], Record<string, string>, number, RegExp][] = [
      [['import', 'products', file], env, 1, /the header row lacks name, base_price, currency/],
      [['import', 'products', path.join(dir, 'nope.csv')], env, 1, /cannot read .*nope\.csv: no such file/],
      [['import', 'products', good], { ...env, PRICEHOUND_KEY: 'ph_live_nope' }, 1, /the API key was refused \(401\)/],
      [['import', 'products'], env, 2, /missing FILE/],
      [['import', 'products', file, '--batch-size', '1001'], env, 2, /--batch-size must be a whole number from 1 to 1000/],
      [['export', 'products', '--format', 'xml'], env, 2, /--format must be csv or jsonl/],
      [['export', 'products'], { ...storage.env, PRICEHOUND_KEY: '' }, 2, /an API key is required/],
      [['export', 'products', '--min-price', 'cheap'], env, 1, /min_price/],
    ];
    for (const [args, e, code, message] of cases) {
      const r = await cli(args, e);
      assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
    }
  });

  it('exports products as CSV that imports again, and as JSON lines, with filters', async () => {
    const out = path.join(dir, 'export.csv');
    const r = await cli(['export', 'products', '--out', out, '--brand', 'Bosch'], env);
    assert.equal(r.code, 0, r.stderr);
    const rows = parse(fs.readFileSync(out), { columns: true }) as Record<string, string>[];
    assert.deepEqual(rows.map((x) => [x.sku, x.name, x.base_price, x.currency, x.brand]), [['KT-1', 'Kettle 1.7 l', '39.99', 'EUR', 'Bosch']]);
    assert.match(rows[0]!.id!, /^prod_/);

    const jsonl = await cli(['export', 'products', '--format', 'jsonl', '--sort', 'sku'], env);
    assert.equal(jsonl.code, 0, jsonl.stderr);
    const objects = jsonl.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(objects.length, 10);
    assert.equal(objects[0]!.sku, 'F-6');

    // The formula stays a formula's text through the round trip: guarded on export, unguarded on import.
    const all = path.join(dir, 'all.csv');
    await cli(['export', 'products', '--out', all], env);
    assert.match(fs.readFileSync(all, 'utf8'), /^'=HYPERLINK\(1\),/m);
    const other = (await createKeyWithCli(storage.env, ['--plan', 'business'])).key;
    const back = await cli(['import', 'products', all, '--json'], { ...storage.env, PRICEHOUND_KEY: other });
    assert.equal(back.code, 0, back.stderr);
    assert.equal(JSON.parse(back.stdout).created, 10);
  });

  it('exports price observations page by page', async () => {
    const [product] = (await api('/products?sku=KT-1')).data;
    const observations = Array.from({ length: 5 }, (_, i) => ({
      product_id: product!.id,
      price: 30 + i,
      currency: 'EUR',
      observed_at: new Date(Date.now() - (i + 1) * 86_400_000).toISOString(),
    }));
    const res = await fetch(`${server.url}/api/v1/prices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ observations }),
    });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { created: number }).created, 5);
    const r = await cli(['export', 'prices', '--sku', 'KT-1'], env);
    assert.equal(r.code, 0, r.stderr);
    const rows = parse(r.stdout, { columns: true }) as Record<string, string>[];
    assert.deepEqual(rows.map((x) => x.price), ['34', '33', '32', '31', '30']);
    assert.ok(rows.every((x) => x.sku === 'KT-1' && x.product_id === product!.id && x.competitor_id === '' && x.source === 'api'));
    const none = await cli(['export', 'prices', '--sku', 'KT-1', '--from', new Date(Date.now() - 3600_000).toISOString(), '--format', 'jsonl'], env);
    assert.equal(none.stdout, '');
    // Over two years: the history answers 366 days per request, so the range goes window by window.
    const old = new Date(Date.now() - 700 * 86_400_000).toISOString();
    const older = await fetch(`${server.url}/api/v1/prices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ observations: [{ product_id: product!.id, price: 29, currency: 'EUR', observed_at: old }] }),
    });
    assert.equal(older.status, 200);
    const long = await cli(['export', 'prices', '--sku', 'KT-1', '--from', new Date(Date.now() - 800 * 86_400_000).toISOString()], env);
    assert.equal(long.code, 0, long.stderr);
    assert.deepEqual((parse(long.stdout, { columns: true }) as Record<string, string>[]).map((x) => x.price), ['29', '34', '33', '32', '31', '30']);
    const bad = await cli(['export', 'prices', '--from', 'yesterday'], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--from must be a date and time/);
  });
});

describe('pricehound import products, with no server running', () => {
  let storage: TestStorage;
  before(async () => {
    storage = await testStorage();
  });
  after(() => storage?.cleanup());

  it('opens the database itself', async () => {
    const key = (await createKeyWithCli(storage.env, ['--plan', 'free'])).key;
    const file = path.join(dir, 'direct.csv');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(file, '\ufeffname,base_price,currency\nOne,1,EUR\nTwo,2.5,USD\n');
    const r = await cli(['import', 'products', file, '--json'], { ...storage.env, PRICEHOUND_KEY: key });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).created, 2);
    const exported = await cli(['export', 'products', '--format', 'jsonl', '--sort', 'name'], { ...storage.env, PRICEHOUND_KEY: key });
    assert.deepEqual(exported.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { name: string }).name), ['One', 'Two']);
  });

  it('exports every page, not only the first (150 products, pages of 100)', async () => {
    const key = (await createKeyWithCli(storage.env, ['--plan', 'business'])).key;
    const file = path.join(dir, 'many.csv');
    fs.writeFileSync(file, ['name,base_price,currency,sku', ...Array.from({ length: 150 }, (_, i) => `Item ${i},${i + 1},EUR,M-${i}`)].join('\n'));
    const imported = await cli(['import', 'products', file, '--json'], { ...storage.env, PRICEHOUND_KEY: key });
    assert.equal(JSON.parse(imported.stdout).created, 150, imported.stderr);
    const exported = await cli(['export', 'products', '--format', 'jsonl'], { ...storage.env, PRICEHOUND_KEY: key });
    assert.equal(exported.code, 0, exported.stderr);
    const skus = new Set(exported.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { sku: string }).sku));
    assert.equal(skus.size, 150);
  });
});
