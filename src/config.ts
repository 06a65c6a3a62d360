import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { canonicalTimeZone, wholeHourZone } from './time.js';

// package.json is one level up from both src/ and dist/ (this file is src/config.ts).
const version = (
  JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** Everything the process reads from its environment, validated once at start. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** The embedded engine's buffer cache (PostgreSQL's shared_buffers), in MiB. */
  embeddedSharedBuffersMb: number;
  redisUrl: string | undefined;
  /** Prefix of every Redis key we write, so several deployments (or test runs) can share a Redis. */
  redisPrefix: string;
  /** Connections in the PostgreSQL pool of each process. */
  databasePoolSize: number;
  /**
   * A PostgreSQL streaming replica (hot standby) of DATABASE_URL for the reads that tolerate a
   * bounded lag: history, trends, CSV exports, the price-change summary (src/db/read-replica.ts).
   */
  databaseReadUrl: string | undefined;
  /** A replica further behind than this (ms) is not read; its reads go to the primary. */
  databaseReadMaxLagMs: number;
  /** How often the replica's lag is measured (ms). */
  databaseReadCheckMs: number;
  logLevel: LogLevel;
  /** Trust X-Forwarded-For from these proxies when working out the client address. */
  trustProxy: boolean | string;
  /** Failed authentication attempts allowed per client address per window. */
  authFailureLimit: number;
  authFailureWindowSeconds: number;
  /** Maximum request body in bytes (batch endpoints allow `batchBodyLimit`). */
  bodyLimit: number;
  batchBodyLimit: number;
  /**
   * The whole request (headers and body) must arrive within this many ms; otherwise it is
   * answered 408 and the connection closed (a client that stalls mid-upload holds nothing).
   */
  requestTimeoutMs: number;
  /** How long an API key lookup may be served from the in-process cache, in ms. */
  keyCacheTtlMs: number;
  /** Grace period for in-flight requests on SIGTERM before connections are cut, in ms. */
  shutdownTimeoutMs: number;
  /** Outbound requests (competitor pages, webhooks) may reach 127.0.0.1 and ::1. Tests and demos only. */
  allowLoopbackTargets: boolean;
  /**
   * Loopback `address:port` targets outbound requests may reach without ALLOW_LOOPBACK_TARGETS
   * (src/fetcher/address-guard.ts): `pricehound demo` sets its shop's; no setting reads it.
   */
  allowTargets?: readonly string[];
  /** User-Agent of every outbound request. */
  userAgent: string;
  fetchTimeoutMs: number;
  fetchMaxBytes: number;
  fetchMaxRedirects: number;
  /** Requests in flight to one domain at once, and the minimum gap between their starts. */
  fetchDomainConcurrency: number;
  fetchDomainDelayMs: number;
  /** Checks one worker process runs at once. */
  workerConcurrency: number;
  /** Threads that read fetched pages (extraction); 0: on the event loop. Default 1 with 2+ cores. */
  extractThreads: number;
  /** Chromium for listings with render_js; unset: look in the usual places. */
  chromiumPath: string | undefined;
  /** Roll up price observations older than this many days, hourly; unset: never (docs/prices/HISTORY.md). */
  priceRollupAfterDays: number | undefined;
  /**
   * Closed months packed this many days after they end (PostgreSQL); 0: never. 14 by default:
   * after the trends' blocks of the month's last days (built within 10 days).
   */
  pricePackAfterDays: number;
  /** Drop price observations older than this many days, hourly, a month at a time; unset: never (docs/PRICES.md). */
  priceRetentionDays: number | undefined;
  /**
   * Zones whose day buckets the history reads from a cache of local days (HISTORY_ZONES,
   * canonical IANA names; docs/prices/HISTORY.md "Day buckets away from UTC"); none by default.
   */
  historyZones: string[];
  /** Events are kept this many days (at least 30), then pruned hourly (docs/EVENTS.md). */
  eventRetentionDays: number;
  /**
   * POST /prices batches of more observations than this have their alert rules evaluated just
   * after commit by a worker instead of in their own transaction (ALERT_INLINE_MAX; 1000, the
   * largest batch: always in the transaction). docs/alerts/firing.md, "Large batches".
   */
  alertInlineMax: number;
  /** POST /alerts/preview stops reading after this many ms and answers what it evaluated (`complete: false`). */
  alertPreviewTimeoutMs: number;
  /** Previews one API process runs at once (at most one per account); the rest wait up to the timeout, then 503. */
  alertPreviewConcurrency: number;
  /** A webhook attempt that has no 2xx answer within this many ms fails. */
  webhookTimeoutMs: number;
  /** Waits before each retry of a failed delivery, in ms; its length is the number of retries. */
  webhookRetrySchedule: number[];
  /** Up to this fraction of each wait is added at random (0.2: up to 20 %). */
  webhookRetryJitter: number;
  /** An endpoint without a success for this long while failing is disabled, in ms. */
  webhookDisableAfterMs: number;
  /** Webhook endpoints one worker process delivers to at once (each one attempt at a time, in order). */
  webhookConcurrency: number;
  /** After a secret rotation the old secret still signs for this long, in ms. */
  webhookSecretOverlapMs: number;
  /** SMTP_URL: where mail goes (smtp:// or smtps://); undefined: email is off (docs/EMAIL.md). */
  smtpUrl: string | undefined;
  /** MAIL_FROM: the From of every mail. */
  mailFrom: string;
  /** PUBLIC_URL: the address people reach this service at, for the links in mails (no trailing slash). */
  publicUrl: string;
  /** Waits before each retry of a mail the SMTP server did not accept, in ms; its length is the number of retries. */
  emailRetrySchedule: number[];
  /** One SMTP conversation (connect to the end of DATA) longer than this fails, in ms. */
  smtpTimeoutMs: number;
  /**
   * A test hook: the application clock runs this many ms ahead of the machine's (behind when
   * negative), so that a test against a server process can stand at a chosen point of the hour.
   * Read only with NODE_ENV=test; set without it, the configuration is refused (it can never
   * move a production clock). 0: the machine's clock.
   */
  testClockOffsetMs: number;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A bad setting: the message names the variable and is meant to be printed as one line. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === undefined) return def;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = str(env, name)?.toLowerCase();
  if (raw === undefined) return def;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration such as `500ms`, `5s`, `30m`, `2h`, `5d` (a bare number is milliseconds), in ms. */
function parseDuration(name: string, raw: string): number {
  const m = /^(\d{1,10})(ms|s|m|h|d)?$/.exec(raw.trim());
  if (!m) throw new ConfigError(name, `must be a duration such as 500ms, 5s, 30m, 2h or 5d, got "${raw}"`);
  return Number(m[1]) * UNITS[m[2] ?? 'ms']!;
}

function duration(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === undefined) return def;
  const ms = parseDuration(name, raw);
  if (ms < min || ms > max) throw new ConfigError(name, `must be between ${min} ms and ${max} ms, got ${ms} ms`);
  return ms;
}

function durations(env: Env, name: string, def: number[]): number[] {
  const raw = str(env, name);
  if (raw === undefined) return def;
  const list = raw.split(',').map((part) => parseDuration(name, part));
  if (list.length > 30) throw new ConfigError(name, 'must have at most 30 entries');
  return list;
}

/** The retry schedule of docs/WEBHOOKS.md: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
/** The retry schedule of docs/EMAIL.md: 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h. */
export const EMAIL_RETRY_SCHEDULE = [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000];

/**
 * MAIL_FROM: an address, or `Name <address>`. Refused with CR, LF or other control characters,
 * which would let the setting add headers to every mail.
 */
function mailFrom(env: Env, def: string): string {
  const raw = str(env, 'MAIL_FROM') ?? def;

  if (/[\u0000-\u001f\u007f]/.test(raw)) throw new ConfigError('MAIL_FROM', 'must not contain control characters');
  const address = /<([^<>]+)>\s*$/.exec(raw)?.[1] ?? raw;
  if (!/^[^\s@<>]+@[^\s@<>]+$/.test(address))
    throw new ConfigError('MAIL_FROM', `must be an address or "Name <address>", got "${raw}"`);
  return raw;
}

/**
 * HISTORY_ZONES: IANA zone names, comma-separated, each kept once by its canonical name. Only
 * zones whose offset is a whole number of hours from 1970 to 2100: their local days are unions of
 * the hour rows the cache is built from (migrations/0024).
 */
function historyZones(env: Env): string[] {
  const raw = str(env, 'HISTORY_ZONES');
  if (raw === undefined) return [];
  const out = new Set<string>();
  for (const name of raw.split(',').map((z) => z.trim())) {
    const tz = canonicalTimeZone(name);
    if (!tz) throw new ConfigError('HISTORY_ZONES', `"${name}" is not an IANA time zone name`);
    if (tz === 'UTC') throw new ConfigError('HISTORY_ZONES', 'UTC days need no cache: price_days are UTC days');
    if (!wholeHourZone(tz))
      throw new ConfigError(
        'HISTORY_ZONES',
        `${name}'s offset from UTC is not a whole number of hours at every date from 1970 to 2100, so its days are not made of whole UTC hours`,
      );
    out.add(tz);
  }
  if (out.size > 10) throw new ConfigError('HISTORY_ZONES', 'must have at most 10 zones');
  return [...out].sort();
}

export const WEBHOOK_RETRY_SCHEDULE = [
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000,
];

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  return raw;
}

/** TEST_CLOCK_OFFSET_MS (Config.testClockOffsetMs): refused outside NODE_ENV=test. */
function testClockOffset(env: Env): number {
  const raw = str(env, 'TEST_CLOCK_OFFSET_MS');
  if (raw === undefined) return 0;
  if (str(env, 'NODE_ENV') !== 'test')
    throw new ConfigError('TEST_CLOCK_OFFSET_MS', 'is a test hook: it is refused unless NODE_ENV=test');
  if (!/^-?\d+$/.test(raw)) throw new ConfigError('TEST_CLOCK_OFFSET_MS', `must be a whole number of ms, got "${raw}"`);
  const n = Number(raw);
  if (Math.abs(n) > 86_400_000)
    throw new ConfigError('TEST_CLOCK_OFFSET_MS', `must be within a day (86400000 ms) either way, got ${n}`);
  return n;
}

export function loadConfig(env: Env = process.env): Config {
  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const host = str(env, 'HOST') ?? '127.0.0.1';
  if (/\s/.test(host)) throw new ConfigError('HOST', `is not a host name or address: "${host}"`);

  const trustRaw = str(env, 'TRUST_PROXY');
  let trustProxy: boolean | string = false;
  if (trustRaw !== undefined) {
    const lower = trustRaw.toLowerCase();
    trustProxy = lower === 'true' ? true : lower === 'false' ? false : trustRaw;
  }

  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const readUrl = url(env, 'DATABASE_READ_URL', ['postgres:', 'postgresql:']);
  if (readUrl && !databaseUrl)
    throw new ConfigError(
      'DATABASE_READ_URL',
      'needs DATABASE_URL: a read replica is of a PostgreSQL primary, not of the embedded database',
    );
  const readMaxLag = duration(env, 'DATABASE_READ_MAX_LAG', 5_000, 100, 3_600_000);
  const readCheck = duration(env, 'DATABASE_READ_CHECK_INTERVAL', 1_000, 50, 60_000);
  if (readCheck >= readMaxLag)
    throw new ConfigError(
      'DATABASE_READ_CHECK_INTERVAL',
      `must be shorter than DATABASE_READ_MAX_LAG (${readMaxLag} ms), got ${readCheck} ms`,
    );

  return {
    port: int(env, 'PORT', 8080, 0, 65535),
    host,
    dataDir: path.resolve(str(env, 'DATA_DIR') ?? './data'),
    databaseUrl,
    embeddedSharedBuffersMb: int(env, 'EMBEDDED_SHARED_BUFFERS_MB', 128, 1, 1024),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: str(env, 'REDIS_PREFIX') ?? 'pricehound:',
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    databaseReadUrl: readUrl,
    databaseReadMaxLagMs: readMaxLag,
    databaseReadCheckMs: readCheck,
    logLevel: logLevel as LogLevel,
    trustProxy,
    authFailureLimit: int(env, 'AUTH_FAILURE_LIMIT', 100, 1, 1_000_000),
    authFailureWindowSeconds: int(env, 'AUTH_FAILURE_WINDOW_SECONDS', 3600, 1, 86_400),
    bodyLimit: int(env, 'BODY_LIMIT_BYTES', 1_048_576, 1024, 1_073_741_824),
    batchBodyLimit: int(env, 'BATCH_BODY_LIMIT_BYTES', 10_485_760, 1024, 1_073_741_824),
    requestTimeoutMs: duration(env, 'REQUEST_TIMEOUT', 30_000, 10, 600_000),
    keyCacheTtlMs: int(env, 'KEY_CACHE_TTL_MS', 30_000, 0, 3_600_000),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    allowLoopbackTargets: bool(env, 'ALLOW_LOOPBACK_TARGETS', false),
    userAgent: str(env, 'USER_AGENT') ?? `pricehound/${version} (self-hosted price monitoring)`,
    fetchTimeoutMs: int(env, 'FETCH_TIMEOUT_MS', 15_000, 100, 300_000),
    fetchMaxBytes: int(env, 'FETCH_MAX_BYTES', 5_242_880, 1024, 104_857_600),
    fetchMaxRedirects: int(env, 'FETCH_MAX_REDIRECTS', 5, 0, 20),
    fetchDomainConcurrency: int(env, 'FETCH_DOMAIN_CONCURRENCY', 2, 1, 100),
    fetchDomainDelayMs: int(env, 'FETCH_DOMAIN_DELAY_MS', 1_000, 0, 600_000),
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 16, 1, 1000),
    extractThreads: int(env, 'EXTRACT_THREADS', os.availableParallelism() >= 2 ? 1 : 0, 0, 64),
    chromiumPath: str(env, 'CHROMIUM_PATH'),
    priceRollupAfterDays:
      str(env, 'PRICE_ROLLUP_AFTER_DAYS') === undefined ? undefined : int(env, 'PRICE_ROLLUP_AFTER_DAYS', 0, 1, 36_500),
    priceRetentionDays:
      str(env, 'PRICE_RETENTION_DAYS') === undefined ? undefined : int(env, 'PRICE_RETENTION_DAYS', 0, 1, 36_500),
    pricePackAfterDays: int(env, 'PRICE_PACK_AFTER_DAYS', 14, 0, 36_500),
    historyZones: historyZones(env),
    eventRetentionDays: int(env, 'EVENT_RETENTION_DAYS', 30, 30, 36_500),
    alertInlineMax: int(env, 'ALERT_INLINE_MAX', 100, 0, 1000),
    alertPreviewTimeoutMs: duration(env, 'ALERT_PREVIEW_TIMEOUT', 20_000, 1, 600_000),
    alertPreviewConcurrency: int(env, 'ALERT_PREVIEW_CONCURRENCY', 2, 1, 100),
    webhookTimeoutMs: duration(env, 'WEBHOOK_TIMEOUT', 15_000, 100, 60_000),
    webhookRetrySchedule: durations(env, 'WEBHOOK_RETRY_SCHEDULE', WEBHOOK_RETRY_SCHEDULE),
    webhookRetryJitter: int(env, 'WEBHOOK_RETRY_JITTER_PERCENT', 20, 0, 100) / 100,
    webhookDisableAfterMs: duration(env, 'WEBHOOK_DISABLE_AFTER', 5 * 86_400_000, 1, 365 * 86_400_000),
    webhookConcurrency: int(env, 'WEBHOOK_CONCURRENCY', 16, 1, 1000),
    webhookSecretOverlapMs: duration(env, 'WEBHOOK_SECRET_OVERLAP', 86_400_000, 0, 30 * 86_400_000),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: mailFrom(env, 'pricehound <pricehound@localhost>'),
    publicUrl: (
      url(env, 'PUBLIC_URL', ['http:', 'https:']) ??
      `http://${host.includes(':') ? `[${host}]` : host}:${int(env, 'PORT', 8080, 0, 65535)}`
    ).replace(/\/+$/, ''),
    emailRetrySchedule: durations(env, 'EMAIL_RETRY_SCHEDULE', EMAIL_RETRY_SCHEDULE),
    smtpTimeoutMs: duration(env, 'SMTP_TIMEOUT', 30_000, 100, 300_000),
    testClockOffsetMs: testClockOffset(env),
  };
}

/** Parse the config or print the one-line reason and exit: used by every CLI entry point. */
export function loadConfigOrExit(env: Env = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`pricehound: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
