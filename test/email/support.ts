import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { createKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { createRuntime } from '../../src/runtime.js';
import type { TestApp } from '../helpers/app.js';
import { testStorage } from '../helpers/database.js';
import { EmailSecrets } from '../../src/email/tokens.js';
import type { EmailContext } from '../../src/email/service.js';
import { sendDue, smtpTransport, type SendOutcome } from '../../src/email/worker.js';
import type { EmailSubscription } from '../helpers/api-types.js';

/** Helpers of the email tests (not a test file itself). */

export type Headers = Record<string, string>;

export interface Received {
  envelopeFrom: string;
  envelopeTo: string[];
  mail: ParsedMail;
  raw: string;
}

/**
 * A real SMTP server (the `smtp-server` package) on 127.0.0.1 and a free port, started before
 * the file's first test: every mail it accepts is parsed with `mailparser` and kept, in order.
 * `refuseNext(n)` makes it answer the next n messages with a temporary failure (451); `hold()`
 * keeps the next message unanswered until released.
 */
export function smtpServer(env?: Record<string, string>) {
  const s = {
    received: [] as Received[],
    url: '',
    refusing: 0,
    refused: 0,
    server: undefined as SMTPServer | undefined,
    waiters: [] as { done: () => boolean; resolve: () => void }[],
    holding: undefined as { arrived: () => void; gate: Promise<void> } | undefined,
    refuseNext(n: number) {
      s.refusing = n;
    },
    /** The next message is answered only once `release()` is called; `arrived` resolves when it is in. */
    hold() {
      let release!: () => void;
      let arrived!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const came = new Promise<void>((r) => (arrived = r));
      s.holding = { arrived, gate };
      return { arrived: came, release };
    },
    /** Resolves once `done` holds (checked as each mail arrives). */
    async waitFor(done: () => boolean): Promise<void> {
      if (done()) return;
      await new Promise<void>((resolve) => s.waiters.push({ done, resolve }));
    },
    /** The mails that arrived since `from` (an index into `received`). */
    since(from: number) {
      return s.received.slice(from);
    },
    to(address: string) {
      return s.received.filter((r) => r.envelopeTo.includes(address));
    },
  };
  const start = async () => {
    s.server = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      authOptional: true,
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', async () => {
          const held = s.holding;
          if (held) {
            s.holding = undefined;
            held.arrived();
            await held.gate;
          }
          if (s.refusing > 0) {
            s.refusing--;
            s.refused++;
            const err = Object.assign(new Error('Try again later'), { responseCode: 451 });
            callback(err);
            return;
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          simpleParser(raw).then(
            (mail) => {
              s.received.push({
                envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                envelopeTo: session.envelope.rcptTo.map((r) => r.address),
                mail,
                raw,
              });
              s.waiters = s.waiters.filter((w) => {
                if (!w.done()) return true;
                w.resolve();
                return false;
              });
              callback();
            },
            (err: Error) => callback(err),
          );
        });
      },
    });
    s.server.listen(0, '127.0.0.1');
    await once(s.server.server, 'listening');
    const port = (s.server.server.address() as AddressInfo).port;
    s.url = `smtp://127.0.0.1:${port}`;
    if (env) env.SMTP_URL = s.url;
  };
  const stop = () => new Promise<void>((resolve) => (s.server ? s.server.close(() => resolve()) : resolve()));
  return Object.assign(s, { start, stop });
}

export type Smtp = ReturnType<typeof smtpServer>;

/**
 * The test app (as test/helpers/app.ts builds it) with SMTP_URL pointing at a real SMTP server
 * started first, in one hook: node:test runs a file's top-level `before` hooks concurrently, so
 * the server's address must be known before the app's configuration is read.
 */
export function useEmailApp(env: Record<string, string> = {}): { t: TestApp; smtp: Smtp } {
  const smtp = smtpServer(env);
  const t = {} as TestApp;
  before(async () => {
    await smtp.start();
    t.storage = await testStorage();
    const config = loadConfig({ AUTH_FAILURE_LIMIT: '100000', ...t.storage.env, ...env });
    t.rt = await createRuntime(config, pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }));
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
    await smtp.stop();
  });
  return { t, smtp };
}

export function call(
  t: TestApp,
  headers: Headers,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: unknown,
) {
  return t.app.inject({
    method,
    url: /^\/(api\/)?v1\//.test(url) ? url : `/api/v1${url}`,
    headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

export const SUBSCRIPTION_KEYS = [
  'address',
  'confirmed_at',
  'created_at',
  'digest',
  'digest_hour',
  'enabled',
  'event_types',
  'id',
  'object',
  'time_zone',
  'updated_at',
];

export async function subscribe(
  t: TestApp,
  headers: Headers,
  body: Record<string, unknown>,
): Promise<EmailSubscription> {
  const res = await call(t, headers, 'POST', '/email-subscriptions', body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json<EmailSubscription>();
}

/** The email services over the test app's database, as the worker builds them. */
export function emailCtx(t: TestApp): EmailContext {
  return { db: t.rt.db, settings: t.rt.config, secrets: new EmailSecrets(t.rt.deploymentKey) };
}

/** One run of the worker's sending step over SMTP_URL (no retry waits unless `schedule` says so). */
export async function sendNow(t: TestApp, schedule: number[] = [0, 0, 0]): Promise<SendOutcome[]> {
  const transport = smtpTransport(t.rt.config.smtpUrl!, 5000);
  try {
    return await sendDue(t.rt.db, transport, {
      from: t.rt.config.mailFrom,
      workerId: 'test-worker',
      leaseMs: 60_000,
      rules: { schedule, jitter: 0 },
    });
  } finally {
    transport.close();
  }
}

/** The 6-digit code of a confirmation mail. */
export function codeOf(r: Received): string {
  const m = /confirmation code is (\d{6})/.exec(r.mail.text ?? '');
  assert.ok(m, `no code in: ${r.mail.text}`);
  return m[1]!;
}

/** The URL of the List-Unsubscribe header (RFC 2369: `<url>`). */
/** The header line as sent, unfolded. */
export function headerLine(r: Received, name: string): string | undefined {
  const head = r.raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, ' ');
  return new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1];
}

export function unsubscribeLink(r: Received): string {
  // From the raw message (mailparser files the header under `list`), unfolded.
  const head = r.raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, ' ');
  const line = /^List-Unsubscribe: (.*)$/im.exec(head)?.[1] ?? '';
  const m = /<(https?:\/\/[^>]+)>/.exec(line);
  assert.ok(m, `no List-Unsubscribe URL in "${line}"`);
  return m[1]!;
}

/** The path and query of a link to this server, for inject. */
export const pathOf = (link: string) => {
  const u = new URL(link);
  return u.pathname + u.search;
};
