import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(HERE), '../..');
/**
 * How spawned processes start the CLI. Under scripts/run-tests.mjs this file is compiled, in a
 * mirror of the checkout with every source compiled beside it: they run that compiled CLI (~1.2 s
 * less CPU per server start than through tsx, on a CPU-bound suite). A test file run alone through
 * tsx runs the CLI from source the same way.
 */
const COMPILED = HERE.endsWith('.js');
/**
 * Each spawned process also preloads ./exit-with-parent.ts: it ends when the test process does,
 * however that ends (through the IPC channel each child is given). A run stopped by
 * `--test-force-exit`, a timeout or a SIGKILL leaves no server behind.
 */
const ENTRY = [
  ...(COMPILED ? [] : ['--import', 'tsx']),
  '--import',
  path.join(path.dirname(HERE), `exit-with-parent.${COMPILED ? 'js' : 'ts'}`),
  path.join(ROOT, `src/cli/main.${COMPILED ? 'js' : 'ts'}`),
];

export interface LogLine {
  msg?: string;
  level?: number;
  [k: string]: unknown;
}

/** A pricehound process whose JSON log lines are collected. */
export interface LoggedProcess {
  proc: ChildProcess;
  logs: LogLine[];
  /** Resolves with the first log line (past or future) that matches. */
  waitForLog(match: (l: LogLine) => boolean): Promise<LogLine>;
  /** Resolves once `n` log lines (past and future) match, with them. */
  waitForLogs(n: number, match: (l: LogLine) => boolean): Promise<LogLine[]>;
  /** Calls `fn` with every log line from now on, until the returned function is called. */
  onLog(fn: (l: LogLine) => void): () => void;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ServerProcess extends LoggedProcess {
  url: string;
}

const START_TIMEOUT_MS = 60_000;

/**
 * Runs the pricehound CLI (see ENTRY), in the checkout unless `cwd` says where. `nodeFlags`: V8
 * flags for this child (test/cli/helpers/cli.ts passes `--liftoff-only` to its short commands).
 */
export function runCli(
  args: string[],
  env: Record<string, string>,
  opts: { cwd?: string; nodeFlags?: string[] } = {},
): ChildProcess {
  // TEST_NODE_ARGS: extra node flags for the child, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile a load run.
  const nodeArgs = [...(opts.nodeFlags ?? []), ...(process.env.TEST_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const proc = spawn(process.execPath, [...nodeArgs, ...ENTRY, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    // The 'ipc' channel is only watched by the child (exit-with-parent.ts): nothing is sent on it.
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  // Nor does it keep this process alive: the child's pipes and 'exit' do what they did.
  proc.channel?.unref();
  return proc;
}

/**
 * Runs `pricehound ARGS` from source, collecting its JSON log lines. A waiter is rejected when the
 * process exits before its lines came.
 */
export function spawnLogged(args: string[], env: Record<string, string>): LoggedProcess {
  const proc = runCli(args, env);
  const logs: LogLine[] = [];
  const waiters: { n: number; match: (l: LogLine) => boolean; found: LogLine[]; resolve: (l: LogLine[]) => void }[] =
    [];
  const listeners = new Set<(l: LogLine) => void>();
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
    let parsed: LogLine;
    try {
      parsed = JSON.parse(line) as LogLine;
    } catch {
      parsed = { msg: line };
    }
    logs.push(parsed);
    for (const w of [...waiters]) {
      if (!w.match(parsed)) continue;
      w.found.push(parsed);
      if (w.found.length >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(w.found);
      }
    }
    for (const fn of [...listeners]) fn(parsed);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitForLogs = (n: number, match: (l: LogLine) => boolean) => {
    const found = logs.filter(match);
    if (found.length >= n) return Promise.resolve(found);
    return new Promise<LogLine[]>((resolve, reject) => {
      waiters.push({ n, match, found, resolve });
      void exited.then(({ code, signal }) =>
        reject(new Error(`${args.join(' ')} exited (${code ?? signal}) before the log lines; stderr: ${stderr}`)),
      );
    });
  };
  return {
    proc,
    logs,
    waitForLog: async (match) => (await waitForLogs(1, match))[0]!,
    waitForLogs,
    onLog(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/** Resolves once the process logs `ready`, killing it and rejecting if it has not within a minute. */
async function started(p: LoggedProcess, ready: (l: LogLine) => boolean): Promise<LogLine> {
  // A process that never says it is ready (wrong LOG_LEVEL, a hang) must not hang the suite.
  const startTimeout = setTimeout(() => p.proc.kill('SIGKILL'), START_TIMEOUT_MS);
  try {
    return await p.waitForLog(ready);
  } finally {
    clearTimeout(startTimeout);
  }
}

/**
 * Starts a real server process on a free port and resolves once it logs that it listens
 * (killing it and rejecting if it has not within a minute). Its JSON log lines are collected in
 * `logs`; LOG_LEVEL must stay at info or lower for the "listening" line to appear.
 */
export async function spawnServer(env: Record<string, string>, args: string[] = ['start']): Promise<ServerProcess> {
  const p = spawnLogged(args, { PORT: '0', HOST: '127.0.0.1', ...env });
  const listening = await started(
    p,
    (l) => typeof l.msg === 'string' && l.msg.startsWith('Server listening at http://127.0.0.1:'),
  );
  return { ...p, url: String(listening.msg).replace('Server listening at ', '') };
}

/** `pricehound worker` (PostgreSQL only), resolved once it logs that it is ready. */
export async function spawnWorker(env: Record<string, string>): Promise<LoggedProcess> {
  const p = spawnLogged(['worker'], env);
  await started(p, (l) => l.msg === 'pricehound worker ready');
  return p;
}

/** Resolves once `n` log lines (past and future) that match have come from `procs` together; rejects if one exits first. */
export function waitForLogsAcross(
  procs: LoggedProcess[],
  n: number,
  match: (l: LogLine) => boolean,
): Promise<LogLine[]> {
  const found = procs.flatMap((p) => p.logs.filter(match));
  if (found.length >= n) return Promise.resolve(found);
  return new Promise((resolve, reject) => {
    const offs = procs.map((p) =>
      p.onLog((l) => {
        if (!match(l)) return;
        found.push(l);
        if (found.length < n) return;
        for (const off of offs) off();
        resolve(found);
      }),
    );
    for (const p of procs) {
      void p.exited.then(({ code, signal }) => {
        for (const off of offs) off();
        reject(new Error(`a process exited (${code ?? signal}) with ${found.length} of ${n} log lines`));
      });
    }
  });
}
