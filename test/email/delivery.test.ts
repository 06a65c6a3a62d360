import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { startEmailWork } from '../../src/email/start.js';
import { messagesOf } from '../../src/email/sql.js';
import { composeDigests, composeImmediate, sendDue, smtpTransport } from '../../src/email/worker.js';
import type { TestApp } from '../helpers/app.js';
import {
  call,
  codeOf,
  emailCtx,
  type Headers,
  headerLine,
  sendNow,
  type Smtp,
  subscribe,
  unsubscribeLink,
  useEmailApp,
} from './support.js';
import type { EmailSubscription } from '../helpers/api-types.js';

/**
 * Immediate mails grouped per minute, digests at their hour in the subscriber's time zone,
 * retries, and the worker task itself, against a real SMTP server (docs/EMAIL.md). Time is
 * injected: the composing steps take `now`, so nothing waits for a minute or a day to pass.
 */

const { t, smtp } = useEmailApp({ MAIL_FROM: 'alerts@pricehound.test', PUBLIC_URL: 'http://127.0.0.1:9' });

const MINUTE = 60_000;

async function confirmed(
  t: TestApp,
  smtp: Smtp,
  headers: Headers,
  body: Record<string, unknown>,
): Promise<EmailSubscription> {
  const sub = await subscribe(t, headers, body);
  await sendNow(t);
  const mail = smtp.to(body.address as string).at(-1)!;
  const res = await call(t, headers, 'POST', `/email-subscriptions/${sub.id}/confirm`, { code: codeOf(mail) });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<EmailSubscription>();
}

async function product(headers: Headers, name: string) {
  const res = await call(t, headers, 'POST', '/products', { name, base_price: 10, currency: 'EUR' });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ id: string }>();
}

/** The latest created_at of the account's events (the database's clock). */
async function lastEventAt(accountId: string): Promise<Date> {
  const r = await t.rt.db.query<{ at: Date }>('select max(created_at) as at from events where account_id = $1', [
    accountId,
  ]);
  return new Date(r.rows[0]!.at);
}

describe('immediate mails', () => {
  it("mails nothing before confirmation, then groups one minute's events into one message with escaped user text", async () => {
    const { headers, accountId } = await t.newKey();
    const pending = await subscribe(t, headers, { address: 'early@example.com', event_types: ['product.created'] });
    await product(headers, 'before confirmation');
    await composeImmediate(emailCtx(t), new Date(Date.now() + 2 * MINUTE));
    await sendNow(t);
    assert.deepEqual(
      (await messagesOf(t.rt.db, pending.id)).map((m) => m.kind),
      ['confirmation'],
      'only the code went out before confirmation',
    );

    const sub = await confirmed(t, smtp, headers, { address: 'group@example.com', event_types: ['product.created'] });
    // The three events must fall in one minute (CI once saw them straddle one): start clear of a
    // minute's end. At most a few seconds, and only when the test reaches here in them.
    const msLeft = MINUTE - (Date.now() % MINUTE);
    if (msLeft < 5_000) await new Promise((resolve) => setTimeout(resolve, msLeft + 50));
    await product(headers, 'Kettle <script>alert(1)</script> & "friends"');
    await product(headers, 'Toaster');
    await product(headers, 'Blender');
    const at = await lastEventAt(accountId);
    // The minute is not over yet: nothing is made.
    assert.equal(await composeImmediate(emailCtx(t), at), 0);
    const made = await composeImmediate(emailCtx(t), new Date(at.getTime() + MINUTE));
    assert.ok(made >= 1);
    // Made once: running again makes nothing more.
    assert.equal(await composeImmediate(emailCtx(t), new Date(at.getTime() + 2 * MINUTE)), 0);
    const before = smtp.to('group@example.com').length;
    await sendNow(t);
    const mails = smtp.to('group@example.com').slice(before);
    // Three products made within a second or two: one mail (two if a minute boundary fell between them).
    assert.ok(mails.length >= 1 && mails.length <= 2, `got ${mails.length} mails`);
    const text = mails.map((m) => m.mail.text).join('\n');
    const html = mails.map((m) => String(m.mail.html)).join('\n');
    for (const name of ['Toaster', 'Blender']) assert.ok(text.includes(name), `${name} in the text part`);
    assert.ok(text.includes('Kettle <script>alert(1)</script> & "friends"'), 'the text part has the name as written');
    assert.ok(
      html.includes('Kettle &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;friends&quot;'),
      'the HTML part escapes it',
    );
    assert.ok(!html.includes('<script>'));
    for (const m of mails) {
      assert.equal(m.mail.from?.value[0]?.address, 'alerts@pricehound.test');
      assert.ok(m.envelopeTo.includes('group@example.com'));
      assert.match(m.mail.subject ?? '', /^pricehound: /);
      assert.ok(unsubscribeLink(m).startsWith('http://127.0.0.1:9/email/unsubscribe?s='));
      assert.ok(m.mail.text && m.mail.html, 'both parts');
    }
    // The early subscription still had its one mail only.
    assert.deepEqual(
      (await messagesOf(t.rt.db, pending.id)).map((m) => m.kind),
      ['confirmation'],
    );
    assert.ok((await messagesOf(t.rt.db, sub.id)).every((m) => m.kind !== 'events' || m.status === 'sent'));
  });

  it('events of two different minutes make two mails; other event types make none', async () => {
    const { headers, accountId } = await t.newKey();
    const sub = await confirmed(t, smtp, headers, { address: 'minutes@example.com', event_types: ['product.created'] });
    await product(headers, 'First minute');
    // Move the first event a minute back, as if it had happened then (the queue row with it).
    await t.rt.db.query(
      `update events set created_at = created_at - interval '1 minute' where account_id = $1 and type = 'product.created'`,
      [accountId],
    );
    await t.rt.db.query(
      `update email_pending_events set minute = minute - interval '1 minute' where subscription_id = $1`,
      [sub.id],
    );
    await product(headers, 'Second minute');
    const res = await call(t, headers, 'POST', '/competitors', { name: 'Rival', website: 'https://rival.example' });
    assert.equal(res.statusCode, 201, res.body);
    const at = await lastEventAt(accountId);
    await composeImmediate(emailCtx(t), new Date(at.getTime() + MINUTE));
    const before = smtp.to('minutes@example.com').length;
    await sendNow(t);
    const mails = smtp.to('minutes@example.com').slice(before);
    assert.equal(mails.length, 2);
    assert.ok(mails.some((m) => m.mail.text?.includes('First minute') && !m.mail.text.includes('Second minute')));
    assert.ok(mails.some((m) => m.mail.text?.includes('Second minute') && !m.mail.text.includes('First minute')));
    assert.ok(
      mails.every((m) => !m.mail.text?.includes('Rival')),
      'competitor.created is not a subscribed type',
    );
  });

  it('retries a mail the SMTP server refused, and sends it once when it accepts', async () => {
    const { headers } = await t.newKey();
    await subscribe(t, headers, { address: 'retry@example.com' });
    smtp.refuseNext(2);
    const first = await sendNow(t, [60_000]);
    const mine = first.filter((o) => !o.sent);
    assert.ok(mine.length >= 1, 'the refusal was seen');
    assert.match(mine[0]!.error ?? '', /451|Try again/);
    const state = await t.rt.db.query<{ status: string; next_attempt_at: Date; attempts: number }>(
      `select status, next_attempt_at, attempts from email_messages where recipient = 'retry@example.com'`,
    );
    assert.equal(state.rows[0]!.status, 'pending');
    assert.ok(new Date(state.rows[0]!.next_attempt_at).getTime() > Date.now() + 30_000, 'waits for the schedule');
    // Not due yet: nothing goes.
    assert.equal((await sendNow(t)).filter((o) => o.id === mine[0]!.id).length, 0);
    // Due now (as if the wait had passed): refused once more, then accepted.
    await t.rt.db.query(`update email_messages set next_attempt_at = now() where recipient = 'retry@example.com'`);
    const second = await sendNow(t, [0, 0, 0]);
    assert.ok(second.some((o) => o.id === mine[0]!.id && !o.sent));
    const third = await sendNow(t, [0, 0, 0]);
    assert.ok(third.some((o) => o.id === mine[0]!.id && o.sent));
    assert.equal(smtp.to('retry@example.com').length, 1, 'delivered exactly once');
    const done = await t.rt.db.query<{ status: string; attempts: number }>(
      `select status, attempts from email_messages where id = $1`,
      [mine[0]!.id],
    );
    assert.equal(done.rows[0]!.status, 'sent');
    assert.equal(Number(done.rows[0]!.attempts), 3);
  });

  it('gives up after the last retry', async () => {
    const { headers } = await t.newKey();
    const sub = await subscribe(t, headers, { address: 'never@example.com' });
    smtp.refuseNext(2);
    await sendNow(t, [0]);
    await sendNow(t, [0]);
    const [m] = await messagesOf(t.rt.db, sub.id);
    assert.equal(m!.status, 'failed');
    assert.equal(m!.attempts, 2);
    assert.equal(smtp.to('never@example.com').length, 0);
  });
});

/** The next instant after `from` at which the clock of +05:30 (Asia/Kolkata, no daylight saving) reads `hour`:00. */
function nextKolkataHour(from: Date, hour: number): Date {
  const offset = 330 * MINUTE;
  const local = new Date(from.getTime() + offset);
  let at = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate(), hour) - offset;
  if (at <= from.getTime()) at += 24 * 60 * MINUTE;
  return new Date(at);
}

describe('digests', () => {
  it("mails a daily digest at digest_hour in the subscriber's time zone, once, with alerts, price changes and failing listings", async () => {
    const { headers, accountId } = await t.newKey();
    const now = new Date();
    const kolkataHour = new Date(now.getTime() + 330 * MINUTE).getUTCHours();
    const hour = (kolkataHour + 2) % 24;
    const sub = await confirmed(t, smtp, headers, {
      address: 'digest@example.com',
      digest: 'daily',
      digest_hour: hour,
      time_zone: 'Asia/Kolkata',
    });
    assert.equal(sub.time_zone, 'Asia/Kolkata');

    // What happened in the period: a price change and an alert event.
    const p = await product(headers, 'Digest kettle');
    for (const price of [20, 18.5]) {
      const r = await call(t, headers, 'POST', '/prices', {
        observations: [{ product_id: p.id, price, currency: 'EUR' }],
      });
      assert.ok(r.statusCode < 300, r.body);
    }
    const alert = await call(t, headers, 'POST', '/alerts', {
      name: 'Digest rule',
      condition: { type: 'price_below', threshold: 45, currency: 'EUR' },
    });
    assert.equal(alert.statusCode, 201, alert.body);
    const fired = await call(t, headers, 'POST', `/alerts/${alert.json<{ id: string }>().id}/test`);
    assert.ok(fired.statusCode < 300, fired.body);
    const changes = await t.rt.db.query<{ n: number }>(
      `select count(*)::int as n from events where account_id = $1 and type = 'price.changed'`,
      [accountId],
    );

    const boundary = nextKolkataHour(now, hour);
    // Digest subscriptions get no immediate mails.
    await composeImmediate(emailCtx(t), new Date(Date.now() + 2 * MINUTE));
    assert.deepEqual(
      (await messagesOf(t.rt.db, sub.id)).map((m) => m.kind),
      ['confirmation'],
    );
    // A minute before its hour: not due.
    assert.equal(await countDigests(sub.id, new Date(boundary.getTime() - MINUTE)), 0);
    // A minute after: one digest, and only one however often the job runs.
    assert.equal(await countDigests(sub.id, new Date(boundary.getTime() + MINUTE)), 1);
    assert.equal(await countDigests(sub.id, new Date(boundary.getTime() + 5 * MINUTE)), 1);

    const before = smtp.to('digest@example.com').length;
    await sendNow(t);
    const [mail] = smtp.to('digest@example.com').slice(before);
    assert.ok(mail, 'the digest arrived');
    assert.match(mail.mail.subject ?? '', /^pricehound daily digest: 1 alert, \d+ price changes?, 0 failing listings$/);
    assert.ok(mail.mail.subject?.includes(`${Number(changes.rows[0]!.n)} price change`));
    const endLocal = new Date(boundary.getTime() + 330 * MINUTE).toISOString().slice(0, 13).replace('T', ' ');
    assert.ok(mail.mail.text?.includes(`to ${endLocal}:00 Asia/Kolkata`), mail.mail.text);
    assert.match(mail.mail.text ?? '', /Alerts \(1\)/);
    assert.match(mail.mail.text ?? '', /Failing listings \(0\)/);
    assert.ok(mail.mail.text?.includes('Digest kettle'));
    assert.ok(String(mail.mail.html).includes('Digest kettle'));
    assert.ok(headerLine(mail, 'List-Unsubscribe'));

    // The next day's digest comes a day later, not before.
    assert.equal(await countDigests(sub.id, new Date(boundary.getTime() + 23 * 60 * MINUTE)), 1);
    assert.equal(await countDigests(sub.id, new Date(boundary.getTime() + 24 * 60 * MINUTE + MINUTE)), 2);
  });

  it('a weekly digest goes out on Monday at its hour in its zone (America/New_York)', async () => {
    const { headers } = await t.newKey();
    const sub = await confirmed(t, smtp, headers, {
      address: 'weekly@example.com',
      digest: 'weekly',
      digest_hour: 9,
      time_zone: 'America/New_York',
    });
    // Find the next Monday 09:00 in New York with Intl (daylight saving or not).
    const fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: 'America/New_York',
      weekday: 'short',
      hour: 'numeric',
      minute: 'numeric',
      hourCycle: 'h23',
    });
    let at = Math.ceil(Date.now() / (60 * MINUTE)) * 60 * MINUTE;
    for (;;) {
      const parts = Object.fromEntries(fmt.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
      if (parts.weekday === 'Mon' && parts.hour === '09' && parts.minute === '00') break;
      at += 60 * MINUTE;
    }
    assert.equal(await countDigests(sub.id, new Date(at - MINUTE)), 0);
    assert.equal(await countDigests(sub.id, new Date(at + MINUTE)), 1);
    assert.equal(await countDigests(sub.id, new Date(at + 6 * 24 * 60 * MINUTE)), 1);
  });
});

async function countDigests(subscriptionId: string, now: Date): Promise<number> {
  await composeDigests(emailCtx(t), now);
  return (await messagesOf(t.rt.db, subscriptionId)).filter((m) => m.kind === 'digest').length;
}

describe('the worker task', () => {
  it('sends a queued mail on its own, woken by the commit, and stops cleanly', async () => {
    const work = await startEmailWork(t.rt.config, t.rt.db, t.rt.deploymentKey, pino({ level: 'silent' }));
    assert.ok(work, 'on with SMTP_URL');
    try {
      const { headers } = await t.newKey();
      await subscribe(t, headers, { address: 'worker@example.com' });
      await smtp.waitFor(() => smtp.to('worker@example.com').length > 0);
      assert.match(smtp.to('worker@example.com')[0]!.mail.text ?? '', /confirmation code is \d{6}/);
    } finally {
      await work.stop();
    }
  });

  it('stopping, finishes the mail being sent and gives back the rest of its batch, due at once', async () => {
    await sendNow(t); // nothing of earlier tests left due: the worker's batch is these three
    const { headers } = await t.newKey();
    const addresses = ['stop0@example.com', 'stop1@example.com', 'stop2@example.com'];
    const subs = [];
    for (const address of addresses) subs.push(await subscribe(t, headers, { address }));
    const held = smtp.hold();
    const work = await startEmailWork(t.rt.config, t.rt.db, t.rt.deploymentKey, pino({ level: 'silent' }));
    assert.ok(work);
    await held.arrived; // the batch of three is claimed; the first is being sent
    const stopped = work.stop(60_000);
    held.release();
    await stopped;
    const delivered = addresses.filter((a) => smtp.to(a).length > 0);
    assert.equal(delivered.length, 1, `one mail sent before the stop: ${delivered.join(', ')}`);
    const rest = (await Promise.all(subs.map((s) => messagesOf(t.rt.db, s.id))))
      .flat()
      .filter((m) => m.status === 'pending');
    assert.equal(rest.length, 2);
    for (const m of rest) assert.equal(m.attempts, 0, 'a mail given back untried has no attempt counted');
    await sendNow(t);
    for (const address of addresses) assert.equal(smtp.to(address).length, 1, address);
  });
});

describe('several workers', () => {
  it('share the outbox: two senders at once deliver each mail exactly once', async () => {
    const { headers } = await t.newKey();
    const addresses = Array.from({ length: 12 }, (_, i) => `shared${i}@example.com`);
    for (const address of addresses) await subscribe(t, headers, { address });
    const transport = () => smtpTransport(t.rt.config.smtpUrl!, 5000);
    const [a, b] = [transport(), transport()];
    try {
      const rules = { schedule: [0], jitter: 0 };
      const [ra, rb] = await Promise.all([
        sendDue(t.rt.db, a, { from: t.rt.config.mailFrom, workerId: 'worker-a', leaseMs: 60_000, rules }),
        sendDue(t.rt.db, b, { from: t.rt.config.mailFrom, workerId: 'worker-b', leaseMs: 60_000, rules }),
      ]);
      const ids = [...ra, ...rb].filter((o) => o.sent).map((o) => o.id);
      assert.equal(new Set(ids).size, ids.length, 'no mail claimed by both');
    } finally {
      a.close();
      b.close();
    }
    for (const address of addresses) assert.equal(smtp.to(address).length, 1, address);
  });
});
