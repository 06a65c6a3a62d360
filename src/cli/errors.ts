/** Exit statuses of every command. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** A failure whose message is ready to print as one line. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Wrong command line: printed with a hint to --help, exit status 2. */
export class UsageError extends CliError {
  constructor(
    message: string,
    readonly helpCommand: string,
  ) {
    super(message, EXIT.usage);
    this.name = 'UsageError';
  }
}

/** DATABASE_URL without its password, for messages. */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.password) u.password = '***';
    u.search = '';
    return u.toString();
  } catch {
    return 'DATABASE_URL';
  }
}
