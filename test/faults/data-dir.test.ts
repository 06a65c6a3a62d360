import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { usingPostgres } from '../helpers/database.js';
import { runCli, spawnServer } from '../helpers/server-process.js';

/**
 * Fault suite (issue 12, docs/RELIABILITY.md "Faults"): a DATA_DIR that cannot be written. At
 * start a read-only, full or impossible DATA_DIR exits 1 with one line naming DATA_DIR and the
 * cause; a disk that fills while the server runs answers 503 in our shape, the server stays up
 * and writes again once there is space. Read-only and full file systems are small tmpfs mounts
 * (root only: skipped where mounting is not allowed).
 */

const pglite = !usingPostgres();

async function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const p = runCli(args, { PORT: '0', HOST: '127.0.0.1', ...env });
  let stderr = '';
  p.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  p.stdout!.resume();
  const code = await new Promise<number | null>((resolve) => p.on('exit', (c) => resolve(c)));
  return { code, stderr };
}

function tryMount(dir: string, sizeMb: number): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('a DATA_DIR that cannot be written', { skip: !pglite && 'the embedded database only' }, () => {
  let root: string;
  const mounts: string[] = [];
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-faults-'));
  });
  after(() => {
    for (const m of mounts) {
      try {
        execFileSync('umount', ['-l', m], { stdio: 'ignore' });
      } catch {
        // already gone
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
  });
  const mount = (name: string, sizeMb: number): string | null => {
    const dir = path.join(root, name);
    fs.mkdirSync(dir);
    if (!tryMount(dir, sizeMb)) return null;
    mounts.push(dir);
    return dir;
  };

  it('a path through a file: exit 1, one line naming DATA_DIR and the cause', async () => {
    const file = path.join(root, 'a-file');
    fs.writeFileSync(file, '');
    const r = await cli(['start'], { DATA_DIR: path.join(file, 'data') });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr.trim(),
      /^pricehound: cannot write DATA_DIR .*a-file\/data: part of the path is a file, not a directory \(ENOTDIR/,
    );
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  });

  it('a read-only file system: exit 1 saying so', async (t) => {
    const dir = mount('ro', 200);
    if (!dir) return t.skip('mounting a tmpfs is not allowed here');
    const data = path.join(dir, 'data');
    assert.equal((await cli(['migrate'], { DATA_DIR: data })).code, 0);
    execFileSync('mount', ['-o', 'remount,ro', dir]);
    const r = await cli(['start'], { DATA_DIR: data });
    assert.equal(r.code, 1);
    assert.match(r.stderr.trim(), /^pricehound: cannot write DATA_DIR .*: the file system is read-only \(EROFS/);
  });

  it('a full disk at start: exit 1 saying so', async (t) => {
    const dir = mount('tiny', 2);
    if (!dir) return t.skip('mounting a tmpfs is not allowed here');
    const r = await cli(['start'], { DATA_DIR: path.join(dir, 'data') });
    assert.equal(r.code, 1);
    assert.match(r.stderr.trim(), /^pricehound: cannot write DATA_DIR .*: no space left on the device \(ENOSPC\)/);
  });

  it('a disk that fills while serving: 503s in our shape, the server stays up and writes again once there is room', async (t) => {
    const dir = mount('fills', 150);
    if (!dir) return t.skip('mounting a tmpfs is not allowed here');
    const env = { DATA_DIR: path.join(dir, 'data') };
    const server = await spawnServer(env);
    try {
      const key = await (async () => {
        const p = runCli(['keys', 'create', '--plan', 'business', '--json'], env);
        let out = '';
        p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
        await new Promise((resolve) => p.on('exit', resolve));
        return (JSON.parse(out) as { key: string }).key;
      })();
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const post = async (n: number) => {
        const products = Array.from({ length: n }, (_, i) => ({
          name: `Filler ${i} ${'x'.repeat(150)}`,
          base_price: 1,
          currency: 'EUR',
        }));
        const res = await fetch(`${server.url}/api/v1/products/batch`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ products }),
        });
        return { status: res.status, body: (await res.json()) as { code?: string; request_id?: string } };
      };
      assert.equal((await post(10)).status, 200);
      // Fill what is left of the file system.
      const filler = path.join(dir, 'filler');
      try {
        execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M', 'count=400'], { stdio: 'ignore' });
      } catch {
        // dd stops with "no space left", which is the point
      }
      const answers = [];
      for (let i = 0; i < 10; i++) answers.push(await post(100));
      const full = answers.filter((a) => a.status === 503);
      assert.ok(full.length > 0, `statuses while full: ${answers.map((a) => a.status).join(',')}`);
      for (const a of answers) assert.ok(a.status === 200 || a.status === 503, `status ${a.status}`);
      for (const a of full) {
        assert.equal(a.body.code, 'unavailable');
        assert.match(String(a.body.request_id), /^req_/);
      }
      assert.equal(server.proc.exitCode, null, 'still running');
      assert.ok(
        server.logs.some((l) => /No space left on device/.test(JSON.stringify(l.err ?? ''))),
        'the log says why',
      );
      fs.rmSync(filler);
      assert.equal((await post(10)).status, 200, 'writes again once there is room');
    } finally {
      await server.stop('SIGKILL');
    }
  });
});
