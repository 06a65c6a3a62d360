import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KeyView } from '../../src/owner-channel/operations.js';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { cli, createKeyWithCli, lines } from './helpers/cli.js';

const KEY = /^ph_live_[A-Za-z0-9_-]{43}$/;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

async function get(server: ServerProcess, key: string) {
  return fetch(`${server.url}/api/v1/products`, { headers: { authorization: `Bearer ${key}` } });
}

describe('pricehound keys, while the server runs', () => {
  let storage: TestStorage;
  let server: ServerProcess;
  before(async () => {
    storage = await testStorage();
    server = await spawnServer(storage.env);
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await storage?.cleanup();
  });

  it('creates a key the server accepts at once, lists it, and revokes it for the very next request', async () => {
    const k = await createKeyWithCli(storage.env, ['--plan', 'business', '--name', 'live']);
    assert.match(k.key, KEY);
    if (storage.kind === 'pglite') {
      // The server owns DATA_DIR, so the CLI went through its owner channel.
      await server.waitForLog((l) => l.msg === 'owner channel: api key created' && l.key_id === k.id);
    }
    const first = await get(server, k.key);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-ratelimit-limit'), '100000');
    // A second request is answered from the server's key cache.
    assert.equal((await get(server, k.key)).status, 200);

    const listed = await cli(['keys', 'list', '--json', '--account', k.account_id], storage.env);
    assert.equal(listed.code, 0, listed.stderr);
    const keys = JSON.parse(listed.stdout) as KeyView[];
    assert.deepEqual(
      keys.map((x) => [x.id, x.name, x.revoked_at]),
      [[k.id, 'live', null]],
    );
    assert.ok(!listed.stdout.includes(k.key));

    const revoked = await cli(['keys', 'revoke', k.id], storage.env);
    assert.equal(revoked.code, 0, revoked.stderr);
    const revokedAt = new RegExp(`^Revoked ${k.id} \\(account ${k.account_id}\\) at (\\S+)\\.$`, 'm').exec(
      revoked.stdout,
    )?.[1];
    assert.match(revokedAt ?? '', RFC3339);
    const refused = await get(server, k.key);
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer/);

    // Revoking again changes nothing (the first revocation time stays) and still succeeds.
    const again = await cli(['keys', 'revoke', k.id, '--json'], storage.env);
    assert.equal(again.code, 0);
    assert.equal((JSON.parse(again.stdout) as KeyView).revoked_at, revokedAt);
  });

  it('creates a read key: GETs answered, writes refused with 403, the scope listed', async () => {
    const k = await createKeyWithCli(storage.env, ['--plan', 'free', '--scope', 'read']);
    assert.equal(k.scope, 'read');
    assert.equal((await get(server, k.key)).status, 200);
    const write = await fetch(`${server.url}/api/v1/products`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Kettle', base_price: 10, currency: 'EUR' }),
    });
    assert.equal(write.status, 403);
    assert.equal(((await write.json()) as { code: string }).code, 'insufficient_scope');
    const listed = await cli(['keys', 'list', '--account', k.account_id], storage.env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^ID\s+ACCOUNT\s+PLAN\s+SCOPE\s+NAME/);
    assert.match(listed.stdout, new RegExp(`^${k.id}\\s+${k.account_id}\\s+free\\s+read\\s`, 'm'));
    // The default stays a full key; a scope that does not exist is wrong usage, and no key is made.
    assert.equal((await createKeyWithCli(storage.env, ['--plan', 'free', '--account', k.account_id])).scope, 'full');
    const bad = await cli(
      ['keys', 'create', '--plan', 'free', '--scope', 'admin', '--account', k.account_id],
      storage.env,
    );
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown scope "admin": use full\|read/);
    const after = JSON.parse(
      (await cli(['keys', 'list', '--json', '--account', k.account_id], storage.env)).stdout,
    ) as KeyView[];
    assert.equal(after.length, 2);
  });

  it('reports an unknown account through the server as exit 1', async () => {
    const r = await cli(['keys', 'create', '--plan', 'free', '--account', 'acct_doesnotexist', '--json'], storage.env);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(lines(r.stderr).length, 1);
    assert.match(r.stderr, /no account acct_doesnotexist/);
  });
});
