import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { UnknownAccountError } from '../../src/auth/keys.js';
import { readOwner } from '../../src/db/data-dir-lock.js';
import { ERROR_CODES } from '../../src/http/errors.js';
import { channelOperations, OwnerChannelRequestError } from '../../src/owner-channel/client.js';
import { testStorage, type TestStorage, usingPostgres } from '../helpers/database.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { cli, lines } from './helpers/cli.js';

// Issue 8, point 9: the channel through which the CLI reaches the server that owns DATA_DIR
// answers errors in the HTTP API's one error body, with a request id per request.

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

function send(
  socketPath: string,
  method: string,
  path: string,
  opts: { body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath, method, path, agent: false, headers: { 'content-type': 'application/json', ...opts.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
            });
          } catch (err) {
            reject(err as Error);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The HTTP API's error body (src/http/errors.ts errorBody), with the answer's request id in it. */
function assertErrorBody(r: Answer, status: number, code: string, what: string) {
  assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body)}`);
  assert.match(String(r.headers['content-type']), /^application\/json/, what);
  const expectedKeys = ['code', 'error', 'request_id', 'status', ...('details' in r.body ? ['details'] : [])].sort();
  assert.deepEqual(Object.keys(r.body).sort(), expectedKeys, what);
  assert.equal(r.body.status, status, what);
  assert.equal(r.body.code, code, what);
  assert.equal(
    ERROR_CODES[code as keyof typeof ERROR_CODES],
    status,
    `${what}: a code of the vocabulary, with its status`,
  );
  assert.ok(typeof r.body.error === 'string' && r.body.error.length > 0, what);
  assert.match(String(r.body.request_id), /^req_[A-Za-z0-9_-]{16}$/, what);
  assert.equal(r.headers['x-request-id'], r.body.request_id, `${what}: X-Request-Id is the body's request_id`);
}

describe(
  'the owner channel',
  { skip: usingPostgres() && 'with DATABASE_URL no process owns the data: there is no channel' },
  () => {
    let storage: TestStorage;
    let server: ServerProcess;
    let socket: string;
    let pid: number;
    before(async () => {
      storage = await testStorage();
      server = await spawnServer(storage.env);
      const owner = readOwner(storage.env.DATA_DIR!);
      assert.ok(owner, 'the server holds DATA_DIR');
      ({ socket, pid } = owner);
    });
    after(async () => {
      await server?.stop('SIGKILL');
      await storage?.cleanup();
    });

    it('answers an unknown key id revoked through it with the one error body', async () => {
      const r = await send(socket, 'POST', '/keys/key_doesnotexist/revoke');
      assertErrorBody(r, 404, 'not_found', 'revoke an unknown key');
      assert.equal(r.body.error, 'API key key_doesnotexist not found');

      // and the CLI still says it its own way
      const revoked = await cli(['keys', 'revoke', 'key_doesnotexist'], storage.env);
      assert.equal(revoked.code, 1);
      assert.deepEqual(lines(revoked.stderr), ['pricehound: no API key key_doesnotexist: see `pricehound keys list`']);
    });

    it('answers every kind of refusal in that body, with a vocabulary code and the fields in details', async () => {
      const unknownAccount = await send(socket, 'POST', '/keys', {
        body: JSON.stringify({ plan: 'free', account_id: 'acct_doesnotexist' }),
      });
      assertErrorBody(unknownAccount, 404, 'not_found', 'unknown account');
      assert.equal(unknownAccount.body.error, 'Account acct_doesnotexist not found');
      assert.deepEqual(unknownAccount.body.details, [{ field: 'account_id', message: 'is not an existing account' }]);

      const badPlan = await send(socket, 'POST', '/keys', { body: JSON.stringify({ plan: 'gold' }) });
      assertErrorBody(badPlan, 422, 'validation_failed', 'unknown plan');
      assert.deepEqual(badPlan.body.details, [{ field: 'plan', message: 'must be one of free, starter, business' }]);

      assertErrorBody(await send(socket, 'POST', '/keys', { body: '{broken' }), 400, 'invalid_json', 'broken JSON');
      assertErrorBody(await send(socket, 'POST', '/keys', { body: '[1]' }), 400, 'invalid_request', 'not an object');
      assertErrorBody(
        await send(socket, 'POST', '/keys', { body: JSON.stringify({ plan: 'free', name: 'x'.repeat(1_000_000) }) }),
        413,
        'payload_too_large',
        'too large',
      );
      const noRoute = await send(socket, 'DELETE', '/keys');
      assertErrorBody(noRoute, 404, 'not_found', 'no such route');
      assert.equal(noRoute.body.error, 'No route for DELETE /keys');

      // each request its own id
      const ids = new Set([unknownAccount, badPlan, noRoute].map((r) => r.body.request_id));
      assert.equal(ids.size, 3);
    });

    it("keeps a caller's X-Request-Id and logs the request under it", async () => {
      const r = await send(socket, 'POST', '/keys', {
        body: JSON.stringify({ plan: 'free' }),
        headers: { 'x-request-id': 'trace-owner-1' },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.headers['x-request-id'], 'trace-owner-1');
      const logged = await server.waitForLog(
        (l) => l.msg === 'owner channel: api key created' && l.key_id === r.body.id,
      );
      assert.equal(logged.request_id, 'trace-owner-1');
      assert.equal(logged.component, 'owner-channel');
    });

    it("the CLI's client reads that body: an unknown account, and a refusal naming its field", async () => {
      const ops = channelOperations(socket, pid);
      await assert.rejects(ops.createKey({ plan: 'free', accountId: 'acct_doesnotexist' }), (err: unknown) => {
        assert.ok(err instanceof UnknownAccountError);
        assert.equal(err.message, 'no account acct_doesnotexist');
        return true;
      });
      await assert.rejects(ops.rollupPrices({ olderThanDays: 0 }), (err: unknown) => {
        assert.ok(err instanceof OwnerChannelRequestError);
        assert.equal(err.status, 422);
        assert.equal(err.code, 'validation_failed');
        assert.equal(
          err.message,
          'The request has invalid fields: older_than_days must be a whole number of days, at least 1',
        );
        assert.match(err.requestId ?? '', /^req_/);
        return true;
      });
      assert.equal(await ops.revokeKey('key_doesnotexist'), undefined);
    });
  },
);
