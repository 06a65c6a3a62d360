// Writes the OpenAPI document that GET /api/v1/openapi.json serves, built from the real app
// (scripts/openapi-document.ts; nothing is listened on or fetched):
//   node --import tsx scripts/export-openapi.ts [out.json]      (default: stdout)
// scripts/lint-openapi.mjs uses it; so can anyone who wants the document without a server.
import fs from 'node:fs';
import path from 'node:path';
import { openApiDocument } from './openapi-document.js';

const out = process.argv[2];
const text = `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
if (out) {
  fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
  fs.writeFileSync(out, text);
} else {
  process.stdout.write(text);
}
