/**
 * The engine's file system errors are objects, not Errors (`{ name: 'ErrnoError', errno }`), and
 * reach the parent as they were thrown when one ends the engine's thread from outside a query
 * (an exception in a callback of its file system): made Errors naming the errno, in the thread and
 * in the parent, so the message says what happened (src/cli/describe-error.ts reads the code).
 */

/** Emscripten's errno numbers (WASI) of the file system errors DATA_DIR can meet. */
const ERRNO: Record<number, string> = { 2: 'EACCES', 19: 'EDQUOT', 51: 'ENOSPC', 63: 'EPERM', 69: 'EROFS' };

export function asEngineError(reason: unknown): Error {
  if (reason instanceof Error) return reason;
  const r = (reason ?? {}) as { name?: unknown; errno?: unknown; code?: unknown };
  const code = typeof r.code === 'string' ? r.code : typeof r.errno === 'number' ? ERRNO[r.errno] : undefined;
  const err = new Error(
    code
      ? `${code}: the embedded database could not write its files`
      : `the embedded database failed: ${String(r.name ?? reason)}`,
  );
  if (code) Object.assign(err, { code });
  return err;
}
