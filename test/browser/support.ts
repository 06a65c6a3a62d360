/**
 * The browser tests' rig: a real server process (src/cli/main.ts start, as users run it) on a
 * storage of its own, a key made before it starts, and Debian's Chromium driven by
 * playwright-core (never a downloaded browser), on a fresh profile, talking to 127.0.0.1 only.
 * Screenshots go to test-artifacts/browser/ (gitignored), kept after the run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Dialog, Page } from 'playwright-core';
import { createKey } from '../../src/auth/keys.js';
import type { Plan } from '../../src/auth/plans.js';
import { loadConfig } from '../../src/config.js';
import { DASHBOARD_DIST } from '../../src/dashboard/files.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import { CHROMIUM_ARGS, findChromium } from '../../src/fetcher/browser/index.js';
import { CHECKOUT } from '../helpers/checkout.js';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { spawnServer, type ServerProcess } from '../helpers/server-process.js';
import { createKeyWithCli } from '../cli/helpers/cli.js';

// In the checkout, not the suite's compiled mirror of it (removed after the run).
export const ARTIFACTS = path.join(CHECKOUT, 'test-artifacts', 'browser');

const chromiumPath = process.env.CHROMIUM_PATH?.trim() || undefined;
const found = await findChromium(chromiumPath);

/** Why the browser tests cannot run here, or false. */
export const skipReason: string | false = !found.available
  ? `no Chromium on this machine (${found.reason ?? ''}): apt-get install chromium, or set CHROMIUM_PATH`
  : !fs.existsSync(path.join(DASHBOARD_DIST, 'index.html'))
    ? `the dashboard is not built (${DASHBOARD_DIST}): npm run build`
    : false;
if (skipReason) console.log(`# dashboard browser tests skipped: ${skipReason}`);

/**
 * The browser fetcher's flags (no background traffic, no GPU, no QUIC, no DNS of its own: names
 * other than 127.0.0.1 do not resolve), without the sandbox, which cannot run as root.
 * playwright-core adds --headless and a fresh --user-data-dir (launchPersistentContext's).
 */
export const CHROMIUM_FLAGS = [...CHROMIUM_ARGS, '--no-sandbox'];

export interface Rig {
  server: ServerProcess;
  base: string;
  key: string;
  storage: TestStorage;
  context: BrowserContext;
  /** Another key of the account-less kind (`pricehound keys create`, through the running server's owner channel). */
  newKey(plan: Plan): Promise<string>;
  /** The API, as the tests' own client (Bearer key, JSON). */
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  close(): Promise<void>;
}

/** A server with one key of `plan` (made before it starts: PGlite has one owner) and a browser. */
export type Seed = (
  sql: (text: string, params: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>,
  accountId: string,
) => Promise<void>;

export async function startRig(opts: { plan?: Plan; env?: Record<string, string>; seed?: Seed } = {}): Promise<Rig> {
  const storage = await testStorage();
  const config = loadConfig(storage.env);
  const db = await openDatabase(config);
  let key: string;
  try {
    await migrate(db);
    const created = await createKey(db, { plan: opts.plan ?? 'business' });
    key = created.key;
    await opts.seed?.((text, params) => db.query(text, params), created.account_id);
  } finally {
    await db.close();
  }
  const server = await spawnServer({
    ...storage.env,
    AUTH_FAILURE_LIMIT: '100000',
    ALLOW_LOOPBACK_TARGETS: 'true',
    ...opts.env,
  });
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-chromium-'));
  const { chromium } = await import('playwright-core');
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: found.path!,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1280, height: 900 },
      timeout: 60_000,
    });
  } catch (err) {
    await server.stop();
    await storage.cleanup();
    throw err;
  }
  const base = server.url;
  return {
    server,
    base,
    key,
    storage,
    context,
    async newKey(plan: Plan) {
      return (await createKeyWithCli(storage.env, ['--plan', plan])).key;
    },
    async call<T>(method: string, p: string, body?: unknown) {
      const res = await fetch(base + p, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
    },
    async close() {
      await context.close().catch(() => undefined);
      fs.rmSync(userDataDir, { recursive: true, force: true });
      await server.stop();
      await storage.cleanup();
    },
  };
}

export interface Watched {
  page: Page;
  /** Every alert/confirm/prompt the page opened: a script injection shows up here. */
  dialogs: string[];
  /** Uncaught page errors and console errors, CSP violations included. */
  errors: string[];
  /** Answers of 400 and more: `status METHOD url`. */
  failed: string[];
}

/** A new tab that records dialogs and errors (dismissing dialogs so nothing blocks). */
export async function newPage(rig: Rig): Promise<Watched> {
  const page = await rig.context.newPage();
  const dialogs: string[] = [];
  const errors: string[] = [];
  page.on('dialog', (d: Dialog) => {
    dialogs.push(`${d.type()}: ${d.message()}`);
    void d.dismiss().catch(() => undefined);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  const failed: string[] = [];
  page.on('console', (m) => {
    // A failed request is logged without its address; `failed` has it.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(`console: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  });
  // Nothing may leave 127.0.0.1 (no CDN, no fonts): any other request fails the test.
  await page.route(/^(?!https?:\/\/127\.0\.0\.1[:/]|data:|blob:)/, (route) => {
    errors.push(`request outside 127.0.0.1: ${route.request().url()}`);
    void route.abort();
  });
  return { page, dialogs, errors, failed };
}

/** Failed answers other than the expected ones (a dry run the test makes fail on purpose). */
export const unexpected = (failed: string[], allowed: RegExp[] = []) =>
  failed.filter((e) => !allowed.some((r) => r.test(e)));

export async function signIn(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/dashboard/`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
}

/** A full-page screenshot kept as a test artifact. */
export async function shot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Seeds observations through POST /prices, 1000 a request, two requests in flight. */
export async function seedPrices(rig: Rig, observations: unknown[]): Promise<void> {
  const batches: unknown[][] = [];
  for (let i = 0; i < observations.length; i += 1000) batches.push(observations.slice(i, i + 1000));
  let next = 0;
  await Promise.all(
    [0, 1].map(async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        const r = await rig.call<{ failed: number }>('POST', '/api/v1/prices', { observations: batch });
        if (r.status !== 200 || r.body.failed !== 0)
          throw new Error(`POST /prices: ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`);
      }
    }),
  );
}
