import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { freePort } from '../client/support.js';
import { cli, createKeyWithCli, lines } from './helpers/cli.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-cli-import-'));

const CSV = [
  'name,base_price,currency,sku,brand,category,description,url,own_price',
  'Kettle 1.7 l,39.99,EUR,KT-1,Bosch,kitchen,"Quiet, fast",https://shop.example/kt-1,35',
  '"Toaster ""Duo""",abc,EUR,TS-2,Krups,kitchen,,,',
  'Blender,89,EURO,BL-3,,,,,',
  '<script>alert(1)</script>,12.50,EUR,XSS-4,,,,,',
  'Kettle copy,10,EUR,KT-1,,,,,',
  '=HYPERLINK(1),5,EUR,F-6,,,,,',
].join('\r\n');

/**
 * The account commands are clients of a server (src/cli/account.ts): PRICEHOUND_URL (or --url)
 * and PRICEHOUND_KEY, over HTTP through @pricehound/client. Their DATA_DIR is an empty directory
 * that must stay empty: they never open a database.
 */
describe('pricehound import products / export, against a server by URL', () => {
  let storage: TestStorage;
  let server: ServerProcess;
  let env: Record<string, string>;
  let key: string;
  const untouched = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-cli-untouched-'));
  before(async () => {
    storage = await testStorage();
    server = await spawnServer(storage.env);
    key = (await createKeyWithCli(storage.env, ['--plan', 'business'])).key;
    env = { DATA_DIR: untouched, DATABASE_URL: '', PRICEHOUND_URL: server.url, PRICEHOUND_KEY: key };
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await storage?.cleanup();
    assert.deepEqual(fs.readdirSync(untouched), [], 'the account commands opened no DATA_DIR');
    fs.rmSync(untouched, { recursive: true, force: true });
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
    assert.match(
      lines(r.stderr).at(-1)!,
      /into http:\/\/127\.0\.0\.1:\d+: 6 rows, 3 created, 0 already present \(same SKU\), 3 failed; the errors are in .*products\.csv\.errors\.csv\. Cost: 1 request \(\d+ of 100000 left/,
    );
    const report = parse(fs.readFileSync(`${file}.errors.csv`), { columns: true }) as Record<string, string>[];
    assert.deepEqual(
      report.map((e) => [e.row, e.line, e.sku, e.field]),
      [
        ['2', '3', 'TS-2', 'base_price'],
        ['3', '4', 'BL-3', 'currency'],
        ['5', '6', 'KT-1', 'sku'],
      ],
    );
    const products = (await api('/products?sort=sku&limit=100')).data;
    assert.deepEqual(
      products.map((p) => [p.sku, p.name, p.base_price]),
      [
        ['F-6', '=HYPERLINK(1)', 5],
        ['KT-1', 'Kettle 1.7 l', 39.99],
        ['XSS-4', '<script>alert(1)</script>', 12.5],
      ],
    );
    assert.equal(products[1]!.description, 'Quiet, fast');

    // The state file says the file is done: nothing is sent again, nothing doubles.
    const again = await cli(['import', 'products', file, '--json'], env);
    assert.equal(again.code, 1, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), {
      rows: 6,
      created: 3,
      updated: 0,
      present: 0,
      failed: 3,
      skipped: 6,
      errors_file: `${file}.errors.csv`,
      ignored_columns: ['own_price'],
      requests: 0,
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
    fs.writeFileSync(
      `${file}.import-state.json`,
      JSON.stringify({ ...state, rows_done: 4, created: 4, complete: false }),
    );
    const resumed = await cli(['import', 'products', file, '--json'], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    // Rows 5-7 went again under the same Idempotency-Key: replayed, not created twice.
    assert.deepEqual(JSON.parse(resumed.stdout), {
      rows: 7,
      created: 7,
      updated: 0,
      present: 0,
      failed: 0,
      skipped: 4,
      errors_file: null,
      ignored_columns: [],
      requests: 1,
    });
    assert.match(resumed.stderr, /^resuming after row 4/m);
    assert.equal((await api('/products?sku=R-6')).data.length, 1);
    assert.equal(fs.existsSync(`${file}.errors.csv`), false);
  });

  it('refuses a file without the required columns, a missing file, a bad key, URL or filter clearly', async () => {
    const file = path.join(dir, 'bad-header.csv');
    fs.writeFileSync(file, 'title,price\nx,1\n');
    const good = path.join(dir, 'good.csv');
    fs.writeFileSync(good, 'name,base_price,currency\nx,1,EUR\n');
    const cases: [string[], Record<string, string>, number, RegExp][] = [
      [['import', 'products', file], env, 1, /the header row lacks name, base_price, currency/],
      [['import', 'products', path.join(dir, 'nope.csv')], env, 1, /cannot read .*nope\.csv: no such file/],
      [['import', 'products', good], { ...env, PRICEHOUND_KEY: 'ph_live_nope' }, 1, /the API key was refused \(401\)/],
      [['import', 'products'], env, 2, /missing FILE/],
      [
        ['import', 'products', file, '--batch-size', '1001'],
        env,
        2,
        /--batch-size must be a whole number from 1 to 1000/,
      ],
      [['export', 'products', '--format', 'xml'], env, 2, /--format must be csv or jsonl/],
      [['export', 'products'], { ...env, PRICEHOUND_KEY: '' }, 2, /an API key is required/],
      [['export', 'products', '--url', 'ftp://example.com'], env, 2, /--url must be http:\/\/ or https:\/\//],
      [['export', 'products', '--url', 'not a url'], env, 2, /--url must be the server's address/],
      [['export', 'products', '--url', 'http://user:pw@127.0.0.1:1'], env, 2, /--url must not hold credentials/],
      [
        ['export', 'products', '--min-price', 'cheap'],
        env,
        1,
        /the server answered 422 validation_failed: .*min_price .*request_id req_/,
      ],
      [
        ['export', 'prices', '--competitor', 'comp_x;drop'],
        env,
        1,
        /the server answered 422 validation_failed: .*competitor_id/,
      ],
      [
        ['export', 'prices', '--from', '2020-01-01T00:00:00Z', '--to', '2019-01-01T00:00:00Z'],
        env,
        2,
        /--from must be before --to/,
      ],
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
    assert.deepEqual(
      rows.map((x) => [x.sku, x.name, x.base_price, x.currency, x.brand]),
      [['KT-1', 'Kettle 1.7 l', '39.99', 'EUR', 'Bosch']],
    );
    assert.match(rows[0]!.id!, /^prod_/);

    const jsonl = await cli(['export', 'products', '--format', 'jsonl', '--sort', 'sku'], env);
    assert.equal(jsonl.code, 0, jsonl.stderr);
    const objects = jsonl.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(objects.length, 10);
    assert.equal(objects[0]!.sku, 'F-6');

    // The formula stays a formula's text through the round trip: guarded on export, unguarded on import.
    const all = path.join(dir, 'all.csv');
    await cli(['export', 'products', '--out', all], env);
    assert.match(fs.readFileSync(all, 'utf8'), /^'=HYPERLINK\(1\),/m);
    const other = (await createKeyWithCli(storage.env, ['--plan', 'business'])).key;
    const back = await cli(['import', 'products', all, '--json'], { ...env, PRICEHOUND_KEY: other });
    assert.equal(back.code, 0, back.stderr);
    assert.equal(JSON.parse(back.stdout).created, 10);
    const copied = await fetch(`${server.url}/api/v1/products?sku=F-6`, {
      headers: { authorization: `Bearer ${other}` },
    });
    assert.equal(((await copied.json()) as { data: { name: string }[] }).data[0]!.name, '=HYPERLINK(1)');
  });

  it("round-trips the dashboard's export too: the catalogue CSV of the service imports with the guard taken off", async () => {
    const mine = (await createKeyWithCli(storage.env, ['--plan', 'business'])).key;
    const headers = { authorization: `Bearer ${mine}`, 'content-type': 'application/json' };
    const made = await fetch(`${server.url}/api/v1/products`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: '-20% Kettle', sku: '+K', base_price: 19.99, currency: 'EUR' }),
    });
    assert.equal(made.status, 201);
    const catalogue = await fetch(`${server.url}/api/v1/products.csv`, { headers });
    const text = await catalogue.text();
    assert.match(text, /,'\+K,'-20% Kettle,/);
    const file = path.join(dir, 'catalogue.csv');
    fs.writeFileSync(
      file,
      text
        .replace(/\r\n$/, '')
        .split('\r\n')
        .map((l, i) => (i === 0 ? l : l.replace(/^prod_\w+/, '')))
        .join('\r\n'),
    );
    const other = (await createKeyWithCli(storage.env, ['--plan', 'business'])).key;
    const r = await cli(['import', 'products', file, '--json'], { ...env, PRICEHOUND_KEY: other });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).created, 1);
    const back = await fetch(`${server.url}/api/v1/products`, { headers: { authorization: `Bearer ${other}` } });
    assert.deepEqual(
      ((await back.json()) as { data: { name: string; sku: string }[] }).data.map((p) => [p.name, p.sku]),
      [['-20% Kettle', '+K']],
    );
  });

  it('import --update changes the products whose SKU is there, only where the file differs, and says so', async () => {
    const mine = (await createKeyWithCli(storage.env, ['--plan', 'business'])).key;
    const e = { ...env, PRICEHOUND_KEY: mine };
    const v1 = path.join(dir, 'catalogue-v1.csv');
    fs.writeFileSync(
      v1,
      [
        'name,base_price,currency,sku,brand',
        'Kettle,39.99,EUR,U-1,Bosch',
        'Toaster,29.99,EUR,U-2,Krups',
        'Mixer,99,EUR,U-3,',
      ].join('\n'),
    );
    assert.equal(JSON.parse((await cli(['import', 'products', v1, '--json'], e)).stdout).created, 3);
    const v2 = path.join(dir, 'catalogue-v2.csv');
    fs.writeFileSync(
      v2,
      [
        'name,base_price,currency,sku,brand',
        'Kettle,34.99,EUR,U-1,Bosch',
        'Toaster,29.99,eur,U-2,Krups',
        'Mixer XL,99,EUR,U-3,Brava',
        'Grinder,19,EUR,U-4,',
      ].join('\n'),
    );
    const plain = await cli(['import', 'products', v2, '--json'], e);
    assert.deepEqual(
      (({ created, updated, present, failed }) => ({ created, updated, present, failed }))(
        JSON.parse(plain.stdout) as Record<string, number>,
      ),
      { created: 1, updated: 0, present: 3, failed: 0 },
      'without --update a changed catalogue changes nothing',
    );
    const updated = await cli(['import', 'products', v2, '--update', '--restart', '--json'], e);
    assert.equal(updated.code, 0, updated.stderr);
    const summary = JSON.parse(updated.stdout) as Record<string, number>;
    assert.deepEqual(
      { created: summary.created, updated: summary.updated, present: summary.present, failed: summary.failed },
      { created: 0, updated: 2, present: 2, failed: 0 },
    );
    assert.equal(
      summary.requests,
      1 + 2,
      'the catalogue (one page) and a PATCH per changed product: nothing else to create',
    );
    const res = await fetch(`${server.url}/api/v1/products?sort=sku`, { headers: { authorization: `Bearer ${mine}` } });
    const now = (
      (await res.json()) as { data: { sku: string; name: string; base_price: number; brand: string | null }[] }
    ).data;
    assert.deepEqual(
      now.map((p) => [p.sku, p.name, p.base_price, p.brand]),
      [
        ['U-1', 'Kettle', 34.99, 'Bosch'],
        ['U-2', 'Toaster', 29.99, 'Krups'],
        ['U-3', 'Mixer XL', 99, 'Brava'],
        ['U-4', 'Grinder', 19, null],
      ],
    );
  });

  it('exports price observations in one request per 366 days, and says what it cost', async () => {
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
    assert.match(r.stderr, /^Exported 5 rows from http:\/\/127\.0\.0\.1:\d+\. Cost: 1 request \(\d+ of 100000 left/m);
    const rows = parse(r.stdout, { columns: true }) as Record<string, string>[];
    assert.deepEqual(Object.keys(rows[0]!), [
      'product_id',
      'sku',
      'observed_at',
      'competitor_id',
      'competitor_name',
      'listing_id',
      'price',
      'currency',
      'in_stock',
      'source',
      'samples',
      'price_sum',
      'id',
    ]);
    assert.deepEqual(
      rows.map((x) => x.price),
      ['34', '33', '32', '31', '30'],
      'oldest first',
    );
    assert.ok(
      rows.every(
        (x) => x.sku === 'KT-1' && x.product_id === product!.id && x.competitor_id === '' && x.source === 'api',
      ),
    );
    const none = await cli(
      [
        'export',
        'prices',
        '--sku',
        'KT-1',
        '--from',
        new Date(Date.now() - 3600_000).toISOString(),
        '--format',
        'jsonl',
      ],
      env,
    );
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, '');
    const jsonl = await cli(['export', 'prices', '--sku', 'KT-1', '--format', 'jsonl'], env);
    const first = JSON.parse(jsonl.stdout.split('\n')[0]!) as Record<string, unknown>;
    assert.deepEqual(
      [first.price, first.in_stock, first.competitor_id, first.samples, first.sku],
      [34, null, null, 1, 'KT-1'],
    );
    // Over two years: a request per 366 days, one header row in all.
    const old = new Date(Date.now() - 700 * 86_400_000).toISOString();
    const older = await fetch(`${server.url}/api/v1/prices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        observations: [{ product_id: product!.id, price: 29, currency: 'EUR', observed_at: old }],
      }),
    });
    assert.equal(older.status, 200);
    const out = path.join(dir, 'prices.csv');
    const long = await cli(
      [
        'export',
        'prices',
        '--sku',
        'KT-1',
        '--from',
        new Date(Date.now() - 800 * 86_400_000).toISOString(),
        '--out',
        out,
      ],
      env,
    );
    assert.equal(long.code, 0, long.stderr);
    assert.match(long.stderr, /Exported 6 rows to .*prices\.csv .*Cost: 3 requests/);
    assert.deepEqual(
      (parse(fs.readFileSync(out), { columns: true }) as Record<string, string>[]).map((x) => x.price),
      ['29', '34', '33', '32', '31', '30'],
    );
    const bad = await cli(['export', 'prices', '--from', 'yesterday'], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--from must be a date and time/);
  });
});

describe('pricehound import products, with no server answering', () => {
  it('says where it looked and what to do, in a directory it leaves as it was (no ./data)', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-cli-nothing-'));
    try {
      fs.writeFileSync(path.join(cwd, 'products.csv'), 'name,base_price,currency\nOne,1,EUR\n');
      const port = await freePort();
      const r = await cli(
        ['import', 'products', 'products.csv'],
        { PRICEHOUND_URL: `http://127.0.0.1:${port}`, PRICEHOUND_KEY: 'ph_live_whatever', DATA_DIR: '' },
        { cwd },
      );
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        lines(r.stderr).at(-1)!,
        new RegExp(
          `^pricehound: cannot reach a pricehound server at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\): start one \\(\`pricehound start\`\\), or point --url or PRICEHOUND_URL at yours$`,
        ),
      );
      assert.deepEqual(
        fs.readdirSync(cwd).sort(),
        ['products.csv', 'products.csv.errors.csv'].filter((f) => fs.existsSync(path.join(cwd, f))).sort(),
      );
      assert.ok(!fs.existsSync(path.join(cwd, 'data')), 'no ./data');
      // Without PRICEHOUND_URL it asks the default address, and says so.
      const d = await cli(
        ['export', 'products'],
        { PRICEHOUND_URL: '', PRICEHOUND_KEY: 'ph_live_whatever', DATA_DIR: '' },
        { cwd },
      );
      assert.equal(d.code, 1);
      assert.match(
        d.stderr,
        /cannot reach a pricehound server at http:\/\/127\.0\.0\.1:8080|the server answered|the API key was refused/,
      );
      assert.ok(!fs.existsSync(path.join(cwd, 'data')), 'no ./data');
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
});
