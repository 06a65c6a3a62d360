import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EXIT, UsageError } from './errors.js';

export type OptionValues = Record<string, string | boolean | undefined>;

/** What a command's `run` resolves to: an exit status, or 'running' for a server left serving. */
export type Outcome = number | 'running';

export interface Command {
  /** As typed: 'keys create'. */
  name: string;
  /** The full --help text (ends with a newline). */
  help: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** How many positional arguments are allowed: [min, max]. */
  positionals: [number, number];
  /** The name of the positional argument in messages, e.g. 'ID'. */
  argName?: string;
  run(values: OptionValues, positionals: string[]): Promise<Outcome>;
}

/** Parses a command's arguments; --help prints its help. Any mistake is a UsageError (exit 2). */
export async function runCommand(cmd: Command, argv: string[]): Promise<Outcome> {
  let parsed: { values: OptionValues; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...cmd.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    }) as { values: OptionValues; positionals: string[] };
  } catch (err) {
    // node's messages are clear but long; keep the first sentence.
    const message = (err as Error).message.split('. ')[0]!.replace(/\.$/, '');
    throw new UsageError(message, cmd.name);
  }
  if (parsed.values.help) {
    process.stdout.write(cmd.help);
    return EXIT.ok;
  }
  const [min, max] = cmd.positionals;
  const extra = parsed.positionals.slice(max);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`, cmd.name);
  if (parsed.positionals.length < min) throw new UsageError(`missing ${cmd.argName ?? 'argument'}`, cmd.name);
  return cmd.run(parsed.values, parsed.positionals);
}

/** Prints to stdout: what a script reads. */
export function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** Prints to stderr: notes for the person at the terminal. */
export function note(text: string): void {
  process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
}
