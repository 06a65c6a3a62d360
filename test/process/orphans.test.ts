import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { testStorage, type TestStorage } from '../helpers/database.js';

const HERE = fileURLToPath(import.meta.url);
const COMPILED = HERE.endsWith('.js');
/** The stand-in test process: compiled under scripts/run-tests.mjs, else through tsx. */
const PARENT = [
  ...(COMPILED ? [] : ['--import', 'tsx']),
  path.join(path.dirname(HERE), `support/server-parent.${COMPILED ? 'js' : 'ts'}`),
];
/** A bound, not a wait: the server goes within milliseconds; it only fails the test sooner. */
const GONE_WITHIN_MS = 30_000;
/** PF_EXITING in /proc/PID/stat's flags: set when the kernel starts to tear a process down. */
const PF_EXITING = 0x4;

/** The process's state as /proc has it: gone, dying (exiting or a zombie), or running. */
function lifeOf(pid: number): 'gone' | 'dying' | 'running' {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return 'gone';
  }
  // pid (comm) state ppid pgrp session tty_nr tpgid flags ...; comm may hold spaces and parens.
  const [state, , , , , , flags] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return state === 'Z' || state === 'X' || (Number(flags) & PF_EXITING) !== 0 ? 'dying' : 'running';
}

describe('servers the tests start end with the test process (test/helpers/server-process.ts)', () => {
  let storage: TestStorage;
  let parent: ChildProcess | undefined;
  let serverPid: number | undefined;
  before(async () => {
    storage = await testStorage();
  });
  after(async () => {
    parent?.kill('SIGKILL');
    // When the test fails, its orphan must not outlive it.
    if (serverPid !== undefined && lifeOf(serverPid) === 'running') process.kill(serverPid, 'SIGKILL');
    await storage?.cleanup();
  });

  it('a test process killed with SIGKILL leaves no server running', async () => {
    parent = spawn(process.execPath, PARENT, {
      env: { ...process.env, ORPHAN_SERVER_ENV: JSON.stringify(storage.env) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = once(parent, 'exit');
    const [line] = (await Promise.race([
      once(readline.createInterface({ input: parent.stdout! }), 'line'),
      exited.then(([code, signal]) => {
        throw new Error(`the test process ended (${code ?? signal}) before its server started`);
      }),
    ])) as [string];
    const { pid, url } = JSON.parse(line) as { pid: number; url: string };
    serverPid = pid;
    assert.equal(lifeOf(pid), 'running');

    // A connection to the server closes when the server's process does: the event to wait for.
    const { hostname, port } = new URL(url);
    const socket = net.connect(Number(port), hostname);
    await once(socket, 'connect');
    const closed = once(socket, 'close');
    parent.kill('SIGKILL');
    await exited;
    let bound: NodeJS.Timeout | undefined;
    const still = await Promise.race([
      closed.then(() => false),
      new Promise<boolean>((resolve) => (bound = setTimeout(() => resolve(true), GONE_WITHIN_MS))),
    ]);
    clearTimeout(bound);
    socket.destroy();
    assert.equal(
      still,
      false,
      `the server (pid ${pid}) kept its connection ${GONE_WITHIN_MS / 1000} s after its test process was killed`,
    );
    // Closed because the process is ending, not because the server dropped an idle connection.
    assert.notEqual(lifeOf(pid), 'running', `the server (pid ${pid}) is still running`);
  });
});
