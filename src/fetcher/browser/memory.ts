/** Chromium's processes (from Chromium itself) and their memory (from Linux /proc). */
import fs from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import type { BrowserMemory } from './types.js';

/** Chromium's own list of its processes (empty if it cannot tell). */
export async function chromiumProcesses(browser: Browser): Promise<Array<{ type: string; id: number }>> {
  try {
    const cdp = await browser.newBrowserCDPSession();
    try {
      const info = (await cdp.send('SystemInfo.getProcessInfo')) as {
        processInfo: Array<{ type: string; id: number }>;
      };
      return info.processInfo;
    } finally {
      await cdp.detach().catch(() => undefined);
    }
  } catch {
    return [];
  }
}

/** Memory of the running browser's processes (zeros when `browser` is not running). */
export async function browserMemory(browser: Browser | null): Promise<BrowserMemory> {
  if (!browser?.isConnected()) return { running: false, processes: 0, rssBytes: 0, pssBytes: null };
  const procs = await chromiumProcesses(browser);
  let rss = 0;
  let pss: number | null = 0;
  for (const { id } of procs) {
    try {
      const status = await fs.readFile(`/proc/${id}/status`, 'utf8');
      rss += Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
    } catch {
      // exited in between, or no /proc
    }
    try {
      const rollup = await fs.readFile(`/proc/${id}/smaps_rollup`, 'utf8');
      if (pss !== null) pss += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
    } catch {
      pss = null;
    }
  }
  return { running: true, processes: procs.length, rssBytes: rss, pssBytes: pss };
}
