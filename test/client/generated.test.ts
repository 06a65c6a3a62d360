import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { GENERATED, generatedTypes } from '../../scripts/generate-client.js';

// The client's types are generated from the OpenAPI document the code builds: when a route or a
// schema changes, this fails until `npm run client:generate` is run and its output committed.

describe('the typed client’s generated types', () => {
  it('are what openapi-typescript makes of the current OpenAPI document', { timeout: 180_000 }, async () => {
    const fresh = await generatedTypes();
    const committed = fs.readFileSync(GENERATED, 'utf8');
    assert.ok(
      fresh.includes('"/api/v1/products/batch"') && !fresh.includes('"/v1/products"'),
      'the /api/v1 paths, not their /v1 aliases',
    );
    assert.ok(
      fresh === committed,
      'clients/typescript/src/openapi.ts is stale: the OpenAPI document changed. Run `npm run client:generate` and commit the file.',
    );
  });
});
