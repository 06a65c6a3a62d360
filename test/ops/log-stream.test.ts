import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// The batched log destination (src/ops/log-stream.ts) in a process of its own, as the server uses
// it: on stdout, with the process exiting the way the server does.
const HERE = fileURLToPath(import.meta.url);
const compiled = HERE.endsWith('.js');
const MODULE = path.resolve(path.dirname(HERE), `../../src/ops/log-stream.${compiled ? 'js' : 'ts'}`);

function run(script: string, onLine?: (line: string, child: ReturnType<typeof spawn>) => void) {
  const child = spawn(
    process.execPath,
    [...(compiled ? [] : ['--import', 'tsx']), '--input-type=module', '-e', script],
    { stdio: ['ignore', 'pipe', 'inherit'], cwd: path.dirname(MODULE) },
  );
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (s: string) => {
    out += s;
    if (onLine && out.includes('\n')) onLine(out, child);
  });
  return new Promise<{ out: string; code: number | null }>((resolve) =>
    child.on('close', (code) => resolve({ out, code })),
  );
}

const header = `import pino from 'pino'; import { batchedStdout } from ${JSON.stringify(MODULE)};
const log = pino({ base: null, timestamp: false }, batchedStdout());`;

describe('batched log destination', () => {
  it('writes every line logged just before process.exit, in order', async () => {
    const { out, code } = await run(
      `${header} for (let i = 0; i < 5000; i++) log.info({ i }, 'line'); log.fatal('last'); process.exit(3);`,
    );
    assert.equal(code, 3);
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { i?: number; msg: string });
    assert.equal(lines.length, 5001);
    lines.slice(0, 5000).forEach((l, i) => assert.equal(l.i, i));
    assert.equal(lines[5000]!.msg, 'last');
  });

  it('writes a lone line while the process keeps running (no exit needed)', async () => {
    // The child logs once and then waits for ever; it is killed as soon as its line arrives.
    const { out } = await run(`${header} log.info('alone'); setInterval(() => {}, 60_000);`, (_, child) =>
      child.kill(),
    );
    assert.deepEqual(JSON.parse(out.trim()), { level: 30, msg: 'alone' });
  });

  it('writes the lines of a process that runs out of work', async () => {
    const { out, code } = await run(`${header} log.info('one'); log.info('two');`);
    assert.equal(code, 0);
    assert.deepEqual(
      out
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
      ['one', 'two'],
    );
  });
});
