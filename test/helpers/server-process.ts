import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(ROOT, 'src/cli/main.ts');

export interface LogLine {
  msg?: string;
  level?: number;
  [k: string]: unknown;
}

export interface ServerProcess {
  proc: ChildProcess;
  url: string;
  logs: LogLine[];
  /** Resolves with the first log line (past or future) that matches. */
  waitForLog(match: (l: LogLine) => boolean): Promise<LogLine>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const START_TIMEOUT_MS = 60_000;

/** Runs the pricehound CLI from source (`node --import tsx src/cli/main.ts ...`). */
export function runCli(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * Starts a real server process on a free port and resolves once it logs that it listens
 * (killing it and rejecting if it has not within a minute). Its JSON log lines are collected in
 * `logs`; LOG_LEVEL must stay at info or lower for the "listening" line to appear.
 */
export async function spawnServer(env: Record<string, string>, args: string[] = ['start']): Promise<ServerProcess> {
  const proc = runCli(args, { PORT: '0', HOST: '127.0.0.1', ...env });
  const logs: LogLine[] = [];
  const waiters: { match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
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
      if (w.match(parsed)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(parsed);
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitForLog = (match: (l: LogLine) => boolean) => {
    const found = logs.find(match);
    if (found) return Promise.resolve(found);
    return new Promise<LogLine>((resolve, reject) => {
      waiters.push({ match, resolve });
      void exited.then(({ code, signal }) => reject(new Error(`server exited (${code ?? signal}) before the log line; stderr: ${stderr}`)));
    });
  };
  // A server that never says it listens (wrong LOG_LEVEL, a hang) must not hang the suite.
  const startTimeout = setTimeout(() => proc.kill('SIGKILL'), START_TIMEOUT_MS);
  let listening: LogLine;
  try {
    listening = await waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('Server listening at http://127.0.0.1:'));
  } finally {
    clearTimeout(startTimeout);
  }
  const url = String(listening.msg).replace('Server listening at ', '');
  return {
    proc,
    url,
    logs,
    waitForLog,
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}
