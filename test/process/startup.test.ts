import assert from 'node:assert/strict';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import readline from 'node:readline';
import { acquireDataDirLock } from '../../src/db/data-dir-lock.js';
import { testStorage, type TestStorage, usingPostgres } from '../helpers/database.js';
import { type LogLine, runCli, spawnServer } from '../helpers/server-process.js';
import { cli, lines } from '../cli/helpers/cli.js';

describe('server start-up: failures are one line on stderr and a non-zero exit', () => {
  let storage: TestStorage;
  before(async () => {
    storage = await testStorage();
  });
  after(async () => {
    await storage.cleanup();
  });

  it('a bad setting exits 2 naming the variable, before opening anything', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: 'abc' }, /^pricehound: invalid configuration: PORT: must be a whole number, got "abc"$/],
      [{ LOG_LEVEL: 'loud' }, /^pricehound: invalid configuration: LOG_LEVEL: /],
      [
        { DATABASE_URL: 'mysql://localhost/x' },
        /^pricehound: invalid configuration: DATABASE_URL: must start with postgres:/,
      ],
      // The clock's test hook can never move a production clock.
      [
        { NODE_ENV: 'production', TEST_CLOCK_OFFSET_MS: '-60000' },
        /^pricehound: invalid configuration: TEST_CLOCK_OFFSET_MS: is a test hook: it is refused unless NODE_ENV=test$/,
      ],
      [
        { NODE_ENV: '', TEST_CLOCK_OFFSET_MS: '1000' },
        /^pricehound: invalid configuration: TEST_CLOCK_OFFSET_MS: is a test hook/,
      ],
    ];
    const results = await Promise.all(cases.map(([env]) => cli(['start'], { ...storage.env, ...env })));
    results.forEach((r, i) => {
      assert.equal(r.code, 2, r.stderr);
      assert.deepEqual(lines(r.stderr).length, 1, r.stderr);
      assert.match(lines(r.stderr)[0]!, cases[i]![1]);
      assert.equal(r.stdout, '');
    });
    if (storage.kind === 'pglite') assert.ok(!fs.existsSync(path.join(storage.env.DATA_DIR!, 'pricehound.lock')));
  });

  it('an unreachable database exits 1 with the address, without its password', async () => {
    const r = await cli(['start'], { ...storage.env, DATABASE_URL: 'postgres://ph:hunter2@127.0.0.1:1/nowhere' });
    assert.equal(r.code, 1);
    assert.deepEqual(lines(r.stderr), [
      'pricehound: cannot reach the database at postgres://ph:***@127.0.0.1:1/nowhere (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:1',
    ]);
  });

  it('a port in use exits 1 and leaves the data free for the next start', async () => {
    const blocker = net.createServer();
    blocker.listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const r = await cli(['start'], { ...storage.env, PORT: String(port) });
      assert.equal(r.code, 1);
      const errLines = lines(r.stderr);
      assert.equal(errLines.length, 1, r.stderr);
      assert.equal(
        errLines[0],
        `pricehound: cannot listen on 127.0.0.1:${port}: the address is already in use (see PORT and HOST)`,
      );
    } finally {
      blocker.close();
    }
    if (storage.kind === 'pglite') {
      assert.ok(!fs.existsSync(path.join(storage.env.DATA_DIR!, 'pricehound.lock')), 'the lock is released');
      assert.ok(
        !fs.existsSync(path.join(storage.env.DATA_DIR!, 'pricehound.sock')),
        'the owner channel socket is removed',
      );
    }
  });

  it('a second server on the same DATA_DIR is refused; on PostgreSQL it joins the first', async () => {
    const first = await spawnServer(storage.env);
    try {
      if (storage.kind === 'pglite') {
        const r = await cli(['start'], { ...storage.env, PORT: '0' });
        assert.equal(r.code, 1);
        assert.deepEqual(lines(r.stderr), [
          `pricehound: DATA_DIR ${storage.env.DATA_DIR} is in use by another pricehound process (pid ${first.proc.pid}); stop it first, or set DATA_DIR to another directory`,
        ]);
        // The first server is unharmed.
        assert.equal((await fetch(`${first.url}/readyz`)).status, 200);
      } else {
        const second = await spawnServer(storage.env);
        try {
          assert.notEqual(second.url, first.url);
          assert.equal((await fetch(`${second.url}/readyz`)).status, 200);
        } finally {
          assert.equal((await second.stop()).code, 0);
        }
      }
    } finally {
      assert.equal((await first.stop()).code, 0);
    }
  });

  it(
    'waits for a command that has DATA_DIR open, rather than failing',
    { skip: usingPostgres() && 'only the embedded database has a DATA_DIR lock' },
    async () => {
      // This test process plays the command: it holds the lock and has no owner channel.
      const release = acquireDataDirLock(storage.env.DATA_DIR!);
      const proc = runCli(['start'], { ...storage.env, PORT: '0' });
      const exited = once(proc, 'exit');
      const lines = readline.createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
      const nextLog = async (msg: string): Promise<LogLine> => {
        for (;;) {
          const next = await lines.next();
          if (next.done) throw new Error(`server exited before logging "${msg}"`);
          const line = JSON.parse(next.value) as LogLine;
          if (line.msg === msg) return line;
        }
      };
      try {
        const waiting = await nextLog('DATA_DIR is held by another process (a pricehound command?); waiting for it');
        assert.equal(waiting.holder_pid, process.pid);
      } finally {
        release();
      }
      await nextLog('pricehound ready');
      proc.kill('SIGTERM');
      assert.deepEqual(await exited, [0, null]);
    },
  );
});
