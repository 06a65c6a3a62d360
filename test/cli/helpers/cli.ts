import { once } from 'node:events';
import type { CreatedKeyView } from '../../../src/owner-channel/operations.js';
import { runCli } from '../../helpers/server-process.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `pricehound ARGS` from source with `env` and waits for it to exit. */
export async function cli(args: string[], env: Record<string, string>): Promise<CliResult> {
  const proc = runCli(args, env);
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(proc, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** `pricehound keys create --json ...`, asserting success. */
export async function createKeyWithCli(env: Record<string, string>, args: string[] = ['--plan', 'free']): Promise<CreatedKeyView> {
  const r = await cli(['keys', 'create', '--json', ...args], env);
  if (r.code !== 0) throw new Error(`keys create exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as CreatedKeyView;
}

/** Non-empty lines of a command's stderr. */
export const lines = (s: string) => s.split('\n').filter((l) => l.trim() !== '');
