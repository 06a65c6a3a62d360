import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  operationIdProblems,
  routeTable,
  TABLE_BEGIN,
  TABLE_END,
  unnamedStatements,
  withRouteTable,
} from '../../scripts/conventions.js';
import { openApiDocument } from '../../scripts/openapi-document.js';
import { CHECKOUT } from '../helpers/checkout.js';

// Issue 27: the house conventions as checks (rules in scripts/conventions.ts, prose in
// docs/ARCHITECTURE.md, "Conventions"). Each holds for src/ and fires on a throwaway tree.

const ROOT = CHECKOUT;

function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-conventions-'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe("operationId == its route file's name", () => {
  it('holds for src/', () => {
    assert.deepEqual(operationIdProblems(ROOT), []);
  });

  it('fails on a differing name, an operation outside routes/, a computed id and a twin that is no PATCH twin', () => {
    const dir = tree({
      'src/things/routes/list-things.ts': "app.get('/things', { schema: { operationId: 'listThings' } });",
      'src/things/routes/update-thing.ts': "x({ operationId: m === 'PUT' ? 'updateThing' : 'patchThing' });",
      'src/things/routes/get-thing.ts': "x({ operationId: 'fetchThing' });",
      'src/things/routes/delete-thing.ts': "x({ operationId: m === 'DELETE' ? 'deleteThing' : 'patchThing' });",
      'src/things/health.ts': "x({ operationId: 'getHealth' });",
      'src/things/routes/count-things.ts': 'x({ operationId: NAME });',
    });
    try {
      const problems = operationIdProblems(dir).join('\n');
      assert.match(
        problems,
        /get-thing\.ts:1: operationId fetchThing differs from its file's name \(getThing\); rename the file to routes\/fetch-thing\.ts/,
      );
      assert.match(
        problems,
        /things\/health\.ts:1: operation getHealth belongs in src\/<area>\/routes\/get-health\.ts/,
      );
      assert.match(problems, /count-things\.ts:1: operationId is computed/);
      assert.match(problems, /delete-thing\.ts:1: operationId patchThing differs/);
      assert.match(problems, /patchThing is also in/);
      assert.doesNotMatch(problems, /list-things|update-thing\.ts:1: operationId (update|patch)Thing differs/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('every SQL statement in src/ is named', () => {
  it('holds for src/ (every file, not only sql.ts)', () => {
    assert.deepEqual(unnamedStatements(ROOT), []);
  });

  it('fails on an unnamed statement in any file, whatever its quotes; prose and named ones pass', () => {
    const dir = tree({
      'src/things/service.ts': [
        "await db.query('select id from things where account_id = $1', [a]);",
        'await db.query(`update things set name = $2 where id = $1`, [id, n]);',
        'const SQL = `\n  with t as (select 1) insert into things (id) select 1 from t`;',
        "await db.query(`delete from things where id = ${'$'}1`);",
        "await db.query('/* countThings */ select count(*) from things');",
        'await db.query(`/* listThings */\n  select * from things`);',
        'await db.query(`/* byName */ ${SQL}`);',
        "const words = ['select', 'notify me', 'Vacuum sealer', 'select a product from the list'.length];",
      ].join('\n'),
      'src/things/sql.ts': "export const x = 'insert into things (id) values ($1)';",
    });
    try {
      const unnamed = unnamedStatements(dir);
      assert.deepEqual(
        unnamed.map((u) => u.replace(/: an SQL statement.*$/, '')),
        [
          'src/things/service.ts:1',
          'src/things/service.ts:2',
          'src/things/service.ts:3',
          'src/things/service.ts:5',
          'src/things/sql.ts:1',
        ],
        unnamed.join('\n'),
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("docs/ARCHITECTURE.md's URL -> file table", () => {
  it(
    'is the one the OpenAPI document and src/ give (npm run docs:routes rewrites it)',
    { timeout: 120_000 },
    async () => {
      const doc = (await openApiDocument()) as unknown as Parameters<typeof routeTable>[0];
      const table = routeTable(doc, ROOT);
      const markdown = fs.readFileSync(path.join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
      assert.ok(markdown.includes(TABLE_BEGIN) && markdown.includes(TABLE_END));
      assert.equal(
        withRouteTable(markdown, table),
        markdown,
        'docs/ARCHITECTURE.md is out of date: run npm run docs:routes',
      );
      const operations = Object.entries(doc.paths)
        .filter(([p]) => !p.startsWith('/v1/'))
        .flatMap(([, item]) => Object.values(item));
      assert.equal(table.split('\n').length - 2, operations.length, 'one row per operation');
      assert.doesNotMatch(table, /not found in src/);
      assert.match(
        table,
        /\| GET \| `\/api\/v1\/products\/\{id\}\/listings` \| listProductListings \| `src\/listings\/routes\/list-product-listings\.ts` \(under `\/products`, served by listings\/\) \|/,
      );
    },
  );
});
