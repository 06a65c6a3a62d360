import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { cli, createKeyWithCli, lines } from './helpers/cli.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-cli-import-listings-'));

/**
 * `pricehound import listings` against a server by URL, like `import products`. The server runs
 * `serve` (no worker): the listings it creates are never fetched, so no request leaves 127.0.0.1.
 */
describe('pricehound import listings, against a server by URL', () => {
  let storage: TestStorage;
  let server: ServerProcess;
  let env: Record<string, string>;
  let key: string;
  const untouched = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-cli-untouched-'));
  before(async () => {
    storage = await testStorage();
    server = await spawnServer(storage.env, ['serve']);
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
  const call = async <T>(method: string, p: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${server.url}/api/v1${p}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    assert.ok(res.status < 300, `${method} ${p}: ${res.status}`);
    return res.json() as Promise<T>;
  };

  it('imports the good rows, finds competitors by name, id or domain, reports the bad ones, and a re-run creates nothing twice', async () => {
    await call('POST', '/products/batch', {
      products: [
        { name: 'Kettle', sku: 'KT-1', base_price: 39.99, currency: 'EUR' },
        { name: 'Toaster', sku: 'TS-2', base_price: 29.99, currency: 'EUR' },
      ],
    });
    const rival = await call<{ id: string }>('POST', '/competitors', {
      name: 'Rival Shop',
      website: 'https://rival.example/',
    });
    const other = await call<{ id: string }>('POST', '/competitors', {
      name: 'Other',
      website: 'https://other.example/',
    });
    const file = path.join(dir, 'listings.csv');
    fs.writeFileSync(
      file,
      [
        'sku,url,competitor,note',
        'KT-1,https://www.newshop.example/kettle,,first', // 1: created, competitor newshop.example made
        'TS-2,https://newshop.example/toaster,,', // 2: created, the same competitor
        'KT-1,https://rival.example/k,rival shop,', // 3: created, Rival by name (any case)
        `TS-2,https://elsewhere.example/t,${other.id},`, // 4: created, Other by id
        'NOPE-9,https://rival.example/n,,', // 5: failed, unknown SKU
        'KT-1,http://10.0.0.1/kettle,,', // 6: failed, private address
        'KT-1,https://rival.example/x,Nobody,', // 7: failed, no competitor of that name
        ',https://rival.example/y,,', // 8: failed, no SKU
        'KT-1,https://rival.example/k,,', // 9: failed, the same page as row 3 in this batch
      ].join('\n'),
    );
    const r = await cli(['import', 'listings', file], env);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^columns ignored: note$/m);
    assert.match(
      lines(r.stderr).at(-1)!,
      /into http:\/\/127\.0\.0\.1:\d+: 9 rows, 4 listings created, 0 already present \(same product and URL\), 5 failed; the errors are in .*listings\.csv\.errors\.csv\. Cost: 2 requests \(\d+ of 100000 left/,
    );
    const report = parse(fs.readFileSync(`${file}.errors.csv`), { columns: true }) as Record<string, string>[];
    assert.deepEqual(
      report.map((e) => [e.row, e.line, e.sku, e.field]),
      [
        ['5', '6', 'NOPE-9', 'sku'],
        ['6', '7', 'KT-1', 'url'],
        ['7', '8', 'KT-1', 'competitor'],
        ['8', '9', '', 'sku'],
        ['9', '10', 'KT-1', 'url'],
      ],
    );
    assert.match(report[1]!.message!, /private network address/);
    assert.match(report[2]!.message!, /not the name of a competitor/);

    const listings = (await call<{ data: { url: string; competitor_id: string }[] }>('GET', '/listings?limit=100'))
      .data;
    const byUrl = new Map(listings.map((l) => [l.url, l.competitor_id]));
    assert.equal(listings.length, 4);
    assert.equal(byUrl.get('https://rival.example/k'), rival.id);
    assert.equal(byUrl.get('https://elsewhere.example/t'), other.id);
    const made = byUrl.get('https://www.newshop.example/kettle');
    assert.equal(byUrl.get('https://newshop.example/toaster'), made);
    const competitor = await call<{ name: string; domain: string }>('GET', `/competitors/${made}`);
    assert.deepEqual([competitor.name, competitor.domain], ['newshop.example', 'newshop.example']);

    // --restart sends every row again: the pages already listed count as present, nothing doubles.
    const again = await cli(['import', 'listings', file, '--restart', '--json'], env);
    assert.equal(again.code, 1, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), {
      rows: 9,
      created: 0,
      present: 4,
      failed: 5,
      skipped: 0,
      errors_file: `${file}.errors.csv`,
      ignored_columns: ['note'],
      requests: 2,
    });
    assert.equal((await call<{ data: unknown[] }>('GET', '/listings?limit=100')).data.length, 4);
    assert.equal((await call<{ data: unknown[] }>('GET', '/competitors?limit=100')).data.length, 3);
  });

  it('sends batches of --batch-size, resumes after the rows an earlier run did, and leaves no report when all went in', async () => {
    await call('POST', '/products', { name: 'Many', sku: 'MANY', base_price: 1, currency: 'EUR' });
    const file = path.join(dir, 'many.csv');
    fs.writeFileSync(
      file,
      ['url,sku', ...Array.from({ length: 7 }, (_, i) => `https://many${i % 2}.example/p/${i},MANY`)].join('\r\n'),
    );
    const first = await cli(['import', 'listings', file, '--batch-size', '3', '--json'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(JSON.parse(first.stdout), {
      rows: 7,
      created: 7,
      present: 0,
      failed: 0,
      skipped: 0,
      errors_file: null,
      ignored_columns: [],
      requests: 3,
    });
    const statePath = `${file}.listings-import-state.json`;
    const state = JSON.parse(fs.readFileSync(statePath, 'utf8')) as Record<string, unknown>;
    assert.equal(state.complete, true);
    // As if a run had done the first 3 rows and been killed.
    fs.writeFileSync(statePath, JSON.stringify({ ...state, rows_done: 3, created: 3, complete: false }));
    const resumed = await cli(['import', 'listings', file, '--batch-size', '3', '--json'], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /^resuming after row 3/m);
    // Rows 4-6 went again under the same Idempotency-Key (replayed); row 7's batch is new and finds it present.
    const out = JSON.parse(resumed.stdout) as { created: number; present: number; skipped: number; requests: number };
    assert.equal(out.skipped, 3);
    assert.equal(out.created + out.present, 7);
    assert.equal(out.requests, 2);
    assert.equal(fs.existsSync(`${file}.errors.csv`), false);
    const listings = (await call<{ data: unknown[] }>('GET', '/listings?limit=100&sort=-created_at')).data;
    assert.equal(listings.length, 4 + 7);
  });

  it('refuses a file without the required columns, a missing file, a bad key or batch size clearly', async () => {
    const file = path.join(dir, 'bad-header.csv');
    fs.writeFileSync(file, 'product,link\nx,https://a.example/\n');
    const good = path.join(dir, 'good.csv');
    fs.writeFileSync(good, 'sku,url\nx,https://a.example/\n');
    const cases: [string[], Record<string, string>, number, RegExp][] = [
      [['import', 'listings', file], env, 1, /the header row lacks sku, url/],
      [['import', 'listings', path.join(dir, 'nope.csv')], env, 1, /cannot read .*nope\.csv: no such file/],
      [['import', 'listings', good], { ...env, PRICEHOUND_KEY: 'ph_live_nope' }, 1, /the API key was refused \(401\)/],
      [['import', 'listings'], env, 2, /missing FILE/],
      [
        ['import', 'listings', good, '--batch-size', '1001'],
        env,
        2,
        /--batch-size must be a whole number from 1 to 1000/,
      ],
    ];
    for (const [args, e, code, message] of cases) {
      const res = await cli(args, e);
      assert.equal(res.code, code, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, message, args.join(' '));
    }
  });
});
