/** The migrated PGlite template directory in .test-cache/, created first when missing. */
export function pgliteTemplate(env?: Record<string, string | undefined>): string;
