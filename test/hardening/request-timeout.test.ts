import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { rawExchange } from '../helpers/raw-http.js';
import { noisyLines, useListeningApp } from './support.js';
import { stalledUpload } from './support.js';

const TIMEOUT_MS = 300;

describe('hardening: a request must arrive within REQUEST_TIMEOUT', () => {
  const t = useTestApp({ REQUEST_TIMEOUT: `${TIMEOUT_MS}ms` });
  const l = useListeningApp(t);

  it('answers a stalled body (Content-Length 100, 8 bytes sent) 408 in our shape and closes the connection', async () => {
    const { key, accountId } = await t.newKey();
    const started = Date.now();
    const res = await rawExchange(l.port, [stalledUpload(key)], { timeoutMs: 10_000 });
    const took = Date.now() - started;
    assert.equal(res.status, 408, res.raw);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    assert.equal(body.code, 'request_timeout');
    assert.equal(body.status, 408);
    assert.match(String(body.request_id), /^req_/);
    assert.equal(res.headers['x-request-id'], body.request_id);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.match(res.headers['content-type'] ?? '', /^application\/json/);
    assert.ok(took >= TIMEOUT_MS - 50, `answered after ${took} ms, before the timeout`);
    assert.ok(took < TIMEOUT_MS * 10, `answered after ${took} ms`);
    const count = await t.rt.db.query<{ n: number }>('select count(*)::int as n from products where account_id = $1', [
      accountId,
    ]);
    assert.equal(Number(count.rows[0]?.n), 0);
  });

  it('also times out a request whose headers never end', async () => {
    const res = await rawExchange(l.port, ['GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n'], { timeoutMs: 10_000 });
    assert.equal(res.status, 408, res.raw);
    assert.equal((JSON.parse(res.body) as { code: string }).code, 'request_timeout');
  });

  it('logs stalled and aborted uploads without error level or stack trace', async () => {
    const { key } = await t.newKey();
    const before = l.logs.length;
    await rawExchange(l.port, [stalledUpload(key)], { timeoutMs: 10_000 });
    // An upload the client gives up on: it closes the connection mid-body.
    await new Promise<void>((resolve) => {
      const s = net.connect({ port: l.port, host: '127.0.0.1' }, () => {
        s.write(stalledUpload(key));
        setTimeout(() => s.destroy(), 50);
      });
      s.on('close', () => resolve());
    });
    await l.waitForLog((line) => line.msg === 'client error: answered and connection closed', before);
    await l.waitForLog((line) => String(line.msg).startsWith('request abandoned'), before);
    const lines = l.logs.slice(before);
    assert.ok(lines.length > 0, 'the stalled upload is logged');
    assert.deepEqual(noisyLines(lines), []);
  });
});
