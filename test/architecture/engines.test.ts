import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import semver from 'semver';

// We promise Node.js 20 (package.json `engines`). Every package the lock file installs must run
// on the oldest Node that promise allows, or `npm install` warns EBADENGINE there (and an
// ESM-only release required from CommonJS fails outright before Node 20.19). When a new release
// of a dependency raises its floor, pin the last one that does not (package.json `overrides`,
// docs/OPERATIONS.md, "Node.js versions"), or raise our promise and say why.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')) as Record<string, unknown>;

interface LockedPackage {
  version?: string;
  engines?: { node?: string } | string[];
  optional?: boolean;
}

describe('the Node.js version we promise', () => {
  const promise = (read('package.json').engines as { node: string }).node;
  const oldest = semver.minVersion(promise)!;

  it('is the same for the service and the client', () => {
    assert.equal((read('clients/typescript/package.json').engines as { node: string }).node, promise);
  });

  it('runs every locked package (no EBADENGINE on a fresh npm install)', () => {
    const packages = read('package-lock.json').packages as Record<string, LockedPackage>;
    const refused = Object.entries(packages)
      .filter(([where, p]) => where !== '' && !Array.isArray(p.engines) && typeof p.engines?.node === 'string')
      .filter(([, p]) => !semver.satisfies(oldest, (p.engines as { node: string }).node, { includePrerelease: true }))
      .map(
        ([where, p]) =>
          `${where.replace(/^.*node_modules\//, '')}@${p.version} needs node ${(p.engines as { node: string }).node}`,
      );
    assert.deepEqual(refused, [], `these need a newer Node.js than ${oldest.version} (our promise: ${promise})`);
  });

  it('is checked against real engine ranges (the test can fail)', () => {
    assert.equal(semver.satisfies(oldest, '>=22'), false);
    assert.equal(semver.satisfies(oldest, '>=18'), true);
  });
});
