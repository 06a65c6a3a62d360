import fs from 'node:fs';
import { note, out, runCommand } from './command.js';
import { COMMANDS, type CommandEntry } from './commands/index.js';
import { EXIT, UsageError } from './errors.js';

/**
 * The `pricehound` command (bin/pricehound.js runs the compiled copy of this file).
 *   pricehound [start] | serve | worker | migrate | keys create|list|revoke | help [command]
 * Exit status: 0 success, 1 failure (one line on stderr saying why), 2 wrong usage or config.
 * The command table is ./commands/index.ts: this process loads the module of the command it runs
 * and no other (`--help` and the group helps none).
 */

/** The default command: `pricehound` alone, or with options only. */
const START = COMMANDS.find((c) => c.name === 'start')!;

function version(): string {
  // package.json is two levels up from both src/cli and dist/cli.
  const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

const HELP = `Usage: pricehound [--url URL] [--key KEY] [command] [options]

Self-hostable price monitoring service: an HTTP JSON API with API keys and per-key rate limits,
and a worker that checks competitors' pages on schedule.

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(18)}${c.summary}`).join('\n')}
  help [command]      Show help for a command

Operator commands (start, serve, worker, migrate, keys, prices rollup, demo) run on the host:
they read the configuration from the environment (PORT, HOST, DATA_DIR, DATABASE_URL,
REDIS_URL, LOG_LEVEL, ...; see docs/OPERATIONS.md) and work on the same data as the server,
also while it runs. Account commands (import, export) are clients of a server, local or
remote: --url or PRICEHOUND_URL (default http://127.0.0.1:8080) and --key or PRICEHOUND_KEY.
Run \`pricehound COMMAND --help\` for a command's options.

Options:
  -h, --help      show this help
  -v, --version   print the version
`;

/** Commands named by two words ('keys create') form a group; `pricehound GROUP --help` lists them. */
const GROUP_SUMMARIES: Record<string, string> = {
  keys: 'API keys',
  prices: 'Price history maintenance',
  import: 'Import data from files',
  export: 'Export data to files',
};

function groupHelp(group: string): string {
  const members = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
  const names = members.map((c) => c.name.slice(group.length + 1));
  return `Usage: pricehound ${group} ${names.join('|')} [options]

${GROUP_SUMMARIES[group] ?? ''}

Commands:
${members.map((c) => `  ${c.name.padEnd(18)}${c.summary}`).join('\n')}

Run \`pricehound ${group} COMMAND --help\` for a command's options.
`;
}

const isHelp = (a: string | undefined) => a === '--help' || a === '-h';
const isGroup = (word: string) => COMMANDS.some((c) => c.name.startsWith(`${word} `));

/** Finds the command named by the leading words of argv; the rest are its arguments. */
function resolve(argv: string[]): { cmd: CommandEntry; rest: string[] } | { help: string; ok: boolean } {
  const [first, second] = argv;
  if (first === undefined || (first.startsWith('-') && !isHelp(first))) return { cmd: START, rest: argv };
  if (isGroup(first)) {
    // `pricehound keys` alone is wrong usage (exit 2), `pricehound keys --help` asks for it (exit 0).
    if (second === undefined || isHelp(second)) return { help: groupHelp(first), ok: second !== undefined };
    const cmd = COMMANDS.find((c) => c.name === `${first} ${second}`);
    if (!cmd) throw new UsageError(`unknown command "${first} ${second}"`, first);
    return { cmd, rest: argv.slice(2) };
  }
  const cmd = COMMANDS.find((c) => c.name === first);
  if (!cmd) throw new UsageError(`unknown command "${first}"`, '');
  return { cmd, rest: argv.slice(1) };
}

/** Options of the account commands that may also come before the command: `pricehound --url URL export prices`. */
const LEADING = ['--url', '--key'];

/** Moves leading --url/--key after the command's words, where its parser reads them. */
async function leadingOptions(argv: string[]): Promise<string[]> {
  const options: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const a = argv[i]!;
    if (LEADING.includes(a)) {
      if (argv[i + 1] === undefined) throw new UsageError(`${a} needs a value`, '');
      options.push(a, argv[i + 1]!);
      i += 2;
    } else if (LEADING.some((o) => a.startsWith(`${o}=`))) {
      options.push(a);
      i++;
    } else break;
  }
  if (options.length === 0) return argv;
  const rest = argv.slice(i);
  const [first, second] = rest;
  const words =
    first !== undefined && isGroup(first) && second !== undefined && !second.startsWith('-')
      ? 2
      : first !== undefined && !first.startsWith('-')
        ? 1
        : 0;
  const entry = COMMANDS.find((c) => c.name === rest.slice(0, words).join(' '));
  if (!entry || !('url' in (await entry.load()).options))
    throw new UsageError(
      `${options[0]!.split('=')[0]} goes with the account commands (import, export): \`pricehound --url URL export prices\``,
      '',
    );
  return [...rest.slice(0, words), ...options, ...rest.slice(words)];
}

async function main(argv: string[]): Promise<number | 'running'> {
  argv = await leadingOptions(argv);
  const [first] = argv;
  if (isHelp(first)) {
    out(HELP);
    return EXIT.ok;
  }
  if (first === '--version' || first === '-v') {
    out(version());
    return EXIT.ok;
  }
  if (first === 'help') {
    const topic = argv.slice(1);
    if (topic.length === 0) {
      out(HELP);
      return EXIT.ok;
    }
    return main([...topic, '--help']);
  }
  const found = resolve(argv);
  if ('help' in found) {
    (found.ok ? out : note)(found.help);
    return found.ok ? EXIT.ok : EXIT.usage;
  }
  return runCommand(await found.cmd.load(), found.rest);
}

try {
  const outcome = await main(process.argv.slice(2));
  if (outcome !== 'running') process.exitCode = outcome;
} catch (err) {
  if (err instanceof UsageError) {
    const scope = err.helpCommand ? `pricehound ${err.helpCommand}` : 'pricehound';
    note(`${scope}: ${err.message} (see \`${scope} --help\`)`);
  } else {
    // Loaded on failure only: it imports most of the application (./describe-error.ts).
    const { describeError } = await import('./describe-error.js');
    note(`pricehound: ${describeError(err, await settingsForMessages())}`);
    if (/^(debug|trace)$/i.test(process.env.LOG_LEVEL ?? '')) note(String((err as Error)?.stack ?? err));
  }
  process.exitCode = err instanceof UsageError ? EXIT.usage : ((err as { exitCode?: number }).exitCode ?? EXIT.failure);
}

async function settingsForMessages(): Promise<{ databaseUrl?: string | undefined; dataDir?: string }> {
  try {
    const { loadConfig } = await import('../config.js');
    const config = loadConfig();
    return { databaseUrl: config.databaseUrl, dataDir: config.dataDir };
  } catch {
    return {};
  }
}
