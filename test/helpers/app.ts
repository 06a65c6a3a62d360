import { after, before } from 'node:test';
import pino from 'pino';
import { createKey } from '../../src/auth/keys.js';
import type { Plan } from '../../src/auth/plans.js';
import { loadConfig } from '../../src/config.js';
import { buildApp, type App } from '../../src/app.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { OffsetClock } from '../../src/time.js';
import { testStorage, type TestStorage } from './database.js';

export interface TestApp {
  app: App;
  rt: Runtime;
  storage: TestStorage;
  /**
   * The app's clock (AppContext.clock): the machine's until a test moves it, e.g. to the start of
   * the hour so that a test spending an hourly window never sees it turn.
   */
  clock: OffsetClock;
  /** A new key (and, without accountId, a new account). */
  newKey(
    plan?: Plan,
    accountId?: string,
  ): Promise<{ key: string; keyId: string; accountId: string; headers: Record<string, string> }>;
}

/**
 * One app per test file on its own storage (see database.ts), built before the first test and
 * closed after the last. Tests talk to it through `app.inject`, the real HTTP pipeline.
 */
export function useTestApp(env: Record<string, string> = {}): TestApp {
  const t = { clock: new OffsetClock() } as TestApp;
  before(async () => {
    t.storage = await testStorage();
    const config = loadConfig({ AUTH_FAILURE_LIMIT: '100000', ...t.storage.env, ...env });
    t.rt = await createRuntime(config, pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }), { clock: t.clock });
    t.app = await buildApp(t.rt);
    await t.app.ready();
    t.newKey = async (plan = 'free', accountId) => {
      const k = await createKey(t.rt.db, { plan, accountId: accountId ?? null });
      return {
        key: k.key,
        keyId: k.id,
        accountId: k.account_id,
        headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
      };
    };
  });
  after(async () => {
    await t.app?.close();
    await t.rt?.close();
    await t.storage?.cleanup();
  });
  return t;
}
