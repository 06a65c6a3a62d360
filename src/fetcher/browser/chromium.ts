/** Finding the Chromium executable to drive: CHROMIUM_PATH, else the usual places and PATH. */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { BrowserAvailability } from '../types.js';

/** The message of every browser_unavailable error caused by a missing Chromium. */
export const NO_CHROMIUM_MESSAGE = 'no Chromium found: install the chromium package or set CHROMIUM_PATH';

/** Where Chromium is looked for when CHROMIUM_PATH is unset, in order (then the same names on PATH). */
export const CHROMIUM_CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/usr/lib/chromium/chromium',
  '/snap/bin/chromium',
  '/opt/google/chrome/chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];
const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome'];

async function isExecutableFile(p: string): Promise<boolean> {
  try {
    const st = await fs.stat(p);
    if (!st.isFile()) return false;
    await fs.access(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Find the Chromium to use: CHROMIUM_PATH when set (and then only it), else the usual install
 * locations and PATH. Looks at the file system only; it does not start anything.
 */
export async function findChromium(
  chromiumPath: string | undefined,
  envPath = process.env.PATH ?? '',
): Promise<BrowserAvailability> {
  if (chromiumPath !== undefined) {
    if (await isExecutableFile(chromiumPath)) return { available: true, path: chromiumPath };
    return {
      available: false,
      reason: `${NO_CHROMIUM_MESSAGE} (CHROMIUM_PATH=${chromiumPath} is not an executable file)`,
    };
  }
  const onPath = envPath
    .split(path.delimiter)
    .filter((d) => d !== '')
    .flatMap((d) => CHROMIUM_NAMES.map((n) => path.join(d, n)));
  for (const p of [...CHROMIUM_CANDIDATES, ...onPath]) {
    if (await isExecutableFile(p)) return { available: true, path: p };
  }
  return { available: false, reason: NO_CHROMIUM_MESSAGE };
}
