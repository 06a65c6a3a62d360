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
  const r = spawnSync(process.execPath, [DEPCRUISE, 'src', '--config', CONFIG, '--output-type', 'err'], { cwd, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A throwaway tree shaped like src/, each file importing what `files` says. */
function tree(files: Record<string, string[]>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-layers-'));
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }));
  for (const [file, imports] of Object.entries(files)) {
    const full = path.join(dir, file);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    const lines = imports.map((imp, i) => {
      const rel = path.relative(path.dirname(full), path.join(dir, imp)).replace(/\.ts$/, '.js');
      return `import * as m${i} from '${rel.startsWith('.') ? rel : `./${rel}`}';\nexport const x${i} = m${i};`;
    });
    fs.writeFileSync(full, `${lines.join('\n')}\nexport const here = 1;\n`);
  }
  return dir;
}

describe('layering (.dependency-cruiser.cjs, run by .ci/run)', () => {
  it('holds for src/', () => {
    const r = cruise(ROOT);
    assert.equal(r.status, 0, r.out);
  });

  it('fails on each kind of wrong import', () => {
    const dir = tree({
      'src/products/sql.ts': [],
      'src/listings/sql.ts': [],
      'src/app.ts': [],
      'src/http/page.ts': ['src/products/sql.ts'], // toolkit -> area
      'src/pagination/keyset.ts': ['src/app.ts'], // anything -> the composition root
      'src/prices/routes/list.ts': ['src/listings/sql.ts'], // an area into another area's SQL
      'src/money/a.ts': ['src/money/b.ts'], // a cycle
      'src/money/b.ts': ['src/money/a.ts'],
      'src/db/types.ts': ['src/http/page.ts'], // foundation -> toolkit
    });
    try {
      const r = cruise(dir);
      assert.notEqual(r.status, 0, r.out);
      for (const rule of ['toolkit-does-not-import-areas', 'top-is-imported-by-top-only', 'no-other-areas-sql', 'no-circular', 'foundation-does-not-import-toolkit']) {
        assert.match(r.out, new RegExp(rule), `${rule} fires`);
      }
      assert.doesNotMatch(r.out, /src\/products\/sql\.ts → /, 'an area may read its own SQL');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
