/**
 * Progress on stderr: a bar redrawn in place on a terminal, otherwise a plain line at most every
 * few seconds (logs and CI output stay readable).
 */
export interface Progress {
  /** `fraction` of the work done (0..1), and what to say about it. */
  update(fraction: number, text: string): void;
  /** Ends the bar's line. */
  done(text: string): void;
}

const WIDTH = 30;
const PLAIN_EVERY_MS = 2_000;

export function progress(stream: NodeJS.WriteStream = process.stderr): Progress {
  const tty = Boolean(stream.isTTY);
  let lastPlain = 0;
  let drawn = false;
  return {
    update(fraction, text) {
      const f = Math.max(0, Math.min(1, fraction));
      if (tty) {
        const filled = Math.round(f * WIDTH);
        stream.write(
          `\r[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${String(Math.floor(f * 100)).padStart(3)}% ${text}\x1b[K`,
        );
        drawn = true;
      } else if (Date.now() - lastPlain >= PLAIN_EVERY_MS) {
        lastPlain = Date.now();
        stream.write(`${Math.floor(f * 100)}% ${text}\n`);
      }
    },
    done(text) {
      if (tty && drawn) stream.write('\r\x1b[K');
      stream.write(`${text}\n`);
    },
  };
}
