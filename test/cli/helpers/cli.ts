import { once } from 'node:events';
import type { CreatedKeyView } from '../../../src/owner-channel/operations.js';
import { runCli } from '../../helpers/server-process.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A command still running after this long is killed and fails its test with what it printed. */
const CLI_TIMEOUT_MS = 120_000;

/**
 * V8 flags of the commands `cli` runs. A command that opens the embedded database spends most of
 * its CPU starting PGlite's WebAssembly; the baseline compiler alone (no TurboFan tier-up, as the
 * test processes themselves run: scripts/run-tests.mjs) does that for ~1 CPU-s less in a process
 * that lives a few seconds (`pricehound keys list` on a copy of the template: ~3.7 to ~2.7 CPU-s).
 * What the command does and prints is the same; servers (server-process.ts) keep the default.
 */
const CLI_NODE_FLAGS = ['--liftoff-only'];

/** Runs `pricehound ARGS` from source with `env` and waits for it to exit. */
export async function cli(
  args: string[],
  env: Record<string, string>,
  opts: { cwd?: string } = {},
): Promise<CliResult> {
  const proc = runCli(args, env, { ...opts, nodeFlags: CLI_NODE_FLAGS });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill('SIGKILL');
  }, CLI_TIMEOUT_MS);
  const [code] = (await once(proc, 'close')) as [number | null];
  clearTimeout(timer);
  if (timedOut)
    throw new Error(
      `pricehound ${args.join(' ')} did not exit within ${CLI_TIMEOUT_MS / 1000} s; stderr: ${stderr}; stdout: ${stdout.slice(0, 2000)}`,
    );
  return { code, stdout, stderr };
}

/** `pricehound keys create --json ...`, asserting success. */
export async function createKeyWithCli(
  env: Record<string, string>,
  args: string[] = ['--plan', 'free'],
): Promise<CreatedKeyView> {
  const r = await cli(['keys', 'create', '--json', ...args], env);
  if (r.code !== 0) throw new Error(`keys create exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as CreatedKeyView;
}

/** Non-empty lines of a command's stderr. */
export const lines = (s: string) => s.split('\n').filter((l) => l.trim() !== '');
