// The OpenAPI document that GET /api/v1/openapi.json serves, built from the real app and its
// route schemas on a throwaway embedded database (nothing is listened on or fetched). Used by
// scripts/export-openapi.ts (the lint) and scripts/generate-client.ts (the typed client).
// PRICEHOUND_TEST_TEMPLATE (a migrated PGlite directory, scripts/pglite-template.mjs) saves the
// seconds a new database takes to create.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { OPENAPI_PATH } from '../src/openapi/plugin.js';
import { createRuntime } from '../src/runtime.js';

export async function openApiDocument(
  template = process.env.PRICEHOUND_TEST_TEMPLATE,
): Promise<Record<string, unknown>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-openapi-'));
  try {
    if (template && fs.existsSync(path.join(template, 'PG_VERSION')))
      fs.cpSync(template, path.join(dir, 'pgdata'), { recursive: true });
    const rt = await createRuntime(loadConfig({ DATA_DIR: dir }), pino({ level: 'silent' }));
    try {
      const app = await buildApp(rt);
      try {
        const res = await app.inject({ method: 'GET', url: OPENAPI_PATH });
        if (res.statusCode !== 200)
          throw new Error(`GET ${OPENAPI_PATH} answered ${res.statusCode}: ${res.body.slice(0, 500)}`);
        return res.json();
      } finally {
        await app.close();
      }
    } finally {
      await rt.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
