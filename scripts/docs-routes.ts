// Rewrites the URL -> file table of docs/ARCHITECTURE.md from the OpenAPI document the real app
// serves (scripts/openapi-document.ts) and the route files of src/ (scripts/conventions.ts):
//   npm run docs:routes
// test/architecture/conventions.test.ts fails while the table in the file differs.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { routeTable, withRouteTable } from './conventions.js';
import { openApiDocument } from './openapi-document.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const file = path.join(root, 'docs/ARCHITECTURE.md');
const doc = (await openApiDocument()) as unknown as Parameters<typeof routeTable>[0];
const before = fs.readFileSync(file, 'utf8');
const after = withRouteTable(before, routeTable(doc, root));
fs.writeFileSync(file, after);
console.log(
  before === after
    ? 'docs/ARCHITECTURE.md: route table already current'
    : 'docs/ARCHITECTURE.md: route table rewritten',
);
