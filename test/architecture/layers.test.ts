import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CHECKOUT } from '../helpers/checkout.js';

// The sources as written, not the suite's compiled mirror of them.
const ROOT = CHECKOUT;
const DEPCRUISE = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');

function cruise(cwd: string) {
  const r = spawnSync(process.execPath, [DEPCRUISE, 'src', '--config', CONFIG, '--output-type', 'err'], {
    cwd,
    encoding: 'utf8',
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A throwaway tree shaped like src/, each file importing what `files` says; those in `withSql` write a statement. */
function tree(files: Record<string, string[]>, withSql: string[] = []): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-layers-'));
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }),
  );
  for (const [file, imports] of Object.entries(files)) {
    const full = path.join(dir, file);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    const lines = imports.map((imp, i) => {
      const rel = path.relative(path.dirname(full), path.join(dir, imp)).replace(/\.ts$/, '.js');
      return `import * as m${i} from '${rel.startsWith('.') ? rel : `./${rel}`}';\nexport const x${i} = m${i};`;
    });
    const sql = withSql.includes(file) ? "export const q = '/* claimThings */ update things set locked = true';\n" : '';
    fs.writeFileSync(full, `${lines.join('\n')}\nexport const here = 1;\n${sql}`);
  }
  return dir;
}

describe('layering (.dependency-cruiser.cjs; this is what CI runs of it, npm run lint:layers the same)', () => {
  it('holds for src/', () => {
    const r = cruise(ROOT);
    assert.equal(r.status, 0, r.out);
  });

  it('fails on each kind of wrong import', () => {
    const dir = tree(
      {
        'src/products/sql.ts': [],
        'src/listings/sql.ts': [],
        'src/app.ts': [],
        'src/http/page.ts': ['src/products/sql.ts'], // toolkit -> area
        'src/pagination/keyset.ts': ['src/app.ts'], // anything -> the composition root
        'src/prices/routes/list.ts': ['src/listings/sql.ts'], // an area into another area's SQL
        'src/money/a.ts': ['src/money/b.ts'], // a cycle
        'src/money/b.ts': ['src/money/a.ts'],
        'src/db/types.ts': ['src/http/page.ts'], // foundation -> toolkit
        'src/checks/leases.ts': [], // SQL in a file not named sql.ts
        'src/checks/service.ts': ['src/checks/leases.ts'], // an area reads its own SQL through any file
        'src/listings/service.ts': ['src/checks/leases.ts', 'src/checks/service.ts'], // another area's SQL (not sql.ts); its face is fine
        'src/alerts/engine/live.ts': [],
        'src/alerts/service.ts': ['src/alerts/engine/live.ts'],
        'src/alerts/schemas.ts': [],
        'src/competitors/index.ts': [],
        'src/prices/observed.ts': [
          'src/alerts/engine/live.ts',
          'src/alerts/service.ts',
          'src/alerts/schemas.ts',
          'src/competitors/index.ts',
        ], // internals, then the three faces
      },
      ['src/checks/leases.ts'],
    );
    try {
      const r = cruise(dir);
      assert.notEqual(r.status, 0, r.out);
      for (const rule of [
        'toolkit-does-not-import-areas',
        'top-is-imported-by-top-only',
        'no-other-areas-sql',
        'no-circular',
        'foundation-does-not-import-toolkit',
        'areas-meet-at-their-public-face',
      ]) {
        assert.match(r.out, new RegExp(rule), `${rule} fires`);
      }
      assert.doesNotMatch(r.out, /src\/products\/sql\.ts → /, 'an area may read its own SQL');
      assert.match(
        r.out,
        /no-other-areas-sql: src\/prices\/routes\/list\.ts → src\/listings\/sql\.ts/,
        'a sql.ts is private even before it holds a statement',
      );
      assert.match(
        r.out,
        /no-other-areas-sql: src\/listings\/service\.ts → src\/checks\/leases\.ts/,
        'SQL is private in any file, not only sql.ts',
      );
      assert.match(r.out, /areas-meet-at-their-public-face: src\/prices\/observed\.ts → src\/alerts\/engine\/live\.ts/);
      assert.doesNotMatch(r.out, /src\/checks\/service\.ts → /, 'an area reads its own files');
      assert.doesNotMatch(
        r.out,
        /→ src\/(alerts\/(service|schemas)|competitors\/index|checks\/service)\.ts/,
        'index, service and schemas are the public face',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
