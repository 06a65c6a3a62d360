// The migrated PGlite data directory kept in .test-cache/, keyed by the migrations' content, that
// tests and scripts copy instead of creating a database (~0.4 s against ~4 s). Whichever of
// scripts/run-tests.mjs, lint-openapi.mjs or generate-client.ts runs first makes it for the others.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The template's directory, created first when missing; throws when it cannot be made. */
export function pgliteTemplate(env = process.env) {
  const dir = path.join(root, 'migrations');
  const migrations = fs
    .readdirSync(dir)
    .sort()
    .map((f) => f + fs.readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
  const hash = crypto.createHash('sha256').update(migrations).digest('hex').slice(0, 16);
  const template = path.join(root, '.test-cache', `pglite-${hash}`);
  if (!fs.existsSync(path.join(template, 'PG_VERSION'))) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-template-'));
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'scripts/make-test-template.ts'), tmp], {
      stdio: 'inherit',
      env,
      cwd: root,
    });
    if (r.status !== 0)
      throw new Error('could not create the embedded database template (scripts/make-test-template.ts)');
    fs.rmSync(template, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(template), { recursive: true });
    fs.cpSync(tmp, template, { recursive: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return template;
}
