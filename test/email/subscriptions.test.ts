import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectError } from '../products/support.js';
import { createKey } from '../../src/auth/keys.js';
import {
  call,
  codeOf,
  headerLine,
  pathOf,
  sendNow,
  subscribe,
  SUBSCRIPTION_KEYS,
  unsubscribeLink,
  useEmailApp,
} from './support.js';
import type { EmailSubscription } from '../helpers/api-types.js';

/** /email-subscriptions: create, confirm with the mailed code, update, delete, unsubscribe (docs/EMAIL.md). */

const env: Record<string, string> = {
  MAIL_FROM: 'Pricehound Alerts <alerts@pricehound.test>',
  PUBLIC_URL: 'https://ph.example.test',
};
const { t, smtp } = useEmailApp(env);

describe('email subscriptions', () => {
  it('creates an unconfirmed subscription with the defaults and mails it a code, with both parts and List-Unsubscribe', async () => {
    const { headers } = await t.newKey();
    const before = smtp.received.length;
    const res = await call(t, headers, 'POST', '/email-subscriptions', { address: 'ada@example.com' });
    assert.equal(res.statusCode, 201, res.body);
    const sub = res.json<EmailSubscription>();
    assert.deepEqual(Object.keys(sub).sort(), SUBSCRIPTION_KEYS);
    assert.match(sub.id, /^esub_[0-9a-z]{26}$/);
    assert.equal(res.headers.location, `/api/v1/email-subscriptions/${sub.id}`);
    assert.equal(sub.object, 'email_subscription');
    assert.deepEqual(sub.event_types, ['alert.triggered']);
    assert.equal(sub.digest, 'none');
    assert.equal(sub.digest_hour, 8);
    assert.equal(sub.time_zone, 'UTC');
    assert.equal(sub.confirmed_at, null);
    assert.equal(sub.enabled, true);

    const sent = await sendNow(t);
    assert.equal(sent.filter((o) => o.subscription_id === sub.id && o.sent).length, 1);
    const [mail] = smtp.since(before).filter((r) => r.envelopeTo.includes('ada@example.com'));
    assert.ok(mail, 'the code mail arrived');
    assert.equal(mail.mail.from?.value[0]?.address, 'alerts@pricehound.test');
    assert.equal(mail.mail.from?.value[0]?.name, 'Pricehound Alerts');
    assert.equal((mail.mail.to as { value: { address: string }[] }).value[0]?.address, 'ada@example.com');
    assert.equal(mail.mail.subject, 'Confirm your pricehound notifications');
    assert.match(mail.mail.text ?? '', /confirmation code is \d{6}/);
    assert.match(String(mail.mail.html), /<p style="font-size:24px[^>]*>\d{6}<\/p>/);
    const link = unsubscribeLink(mail);
    assert.match(link, /^https:\/\/ph\.example\.test\/email\/unsubscribe\?s=esub_/);
    assert.equal(headerLine(mail, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
    assert.ok(mail.mail.text?.includes(link), 'the plain-text part carries the link');
    assert.ok(String(mail.mail.html).includes(link.replace(/&/g, '&amp;')), 'the HTML part carries the link');
    assert.match(String(mail.mail.messageId), /^<emsg_[0-9a-z]+@pricehound\.test>$/);

    // The code is stored hashed: it appears nowhere in the subscription's row.
    const row = await t.rt.db.query<Record<string, unknown>>('select * from email_subscriptions where id = $1', [
      sub.id,
    ]);
    assert.ok(!JSON.stringify(row.rows[0]).includes(codeOf(mail)));
  });

  it('confirms with the right code; a wrong one says how many attempts are left; the fifth wrong one locks it for good', async () => {
    const { headers } = await t.newKey();
    const before = smtp.received.length;
    const a = await subscribe(t, headers, { address: 'grace@example.com', event_types: [] });
    const b = await subscribe(t, headers, { address: 'linus@example.com' });
    await sendNow(t);
    const mails = smtp.since(before);
    const codeA = codeOf(mails.find((m) => m.envelopeTo.includes('grace@example.com'))!);
    const codeB = codeOf(mails.find((m) => m.envelopeTo.includes('linus@example.com'))!);
    const wrongA = codeA === '000000' ? '000001' : '000000';

    const wrong = await call(t, headers, 'POST', `/email-subscriptions/${a.id}/confirm`, { code: wrongA });
    const err = expectError(wrong, 422, 'validation_failed');
    assert.match(JSON.stringify(err.details), /4 attempts left/);
    expectError(
      await call(t, headers, 'POST', `/email-subscriptions/${a.id}/confirm`, { code: 'abc' }),
      422,
      'validation_failed',
    );
    expectError(
      await call(t, headers, 'POST', `/email-subscriptions/${a.id}/confirm`, { code: 123456 }),
      422,
      'validation_failed',
    );
    expectError(
      await call(t, headers, 'POST', `/email-subscriptions/${a.id}/confirm`, { code: codeA, extra: 1 }),
      422,
      'validation_failed',
    );
    // B's code does not confirm A.
    if (codeB !== codeA)
      expectError(
        await call(t, headers, 'POST', `/email-subscriptions/${a.id}/confirm`, { code: codeB }),
        422,
        'validation_failed',
      );

    const ok = await call(t, headers, 'POST', `/email-subscriptions/${a.id}/confirm`, { code: codeA });
    assert.equal(ok.statusCode, 200, ok.body);
    const confirmed = ok.json<EmailSubscription>();
    assert.ok(confirmed.confirmed_at && Date.parse(confirmed.confirmed_at) > 0);
    expectError(
      await call(t, headers, 'POST', `/email-subscriptions/${a.id}/confirm`, { code: codeA }),
      409,
      'conflict',
    );

    const wrongB = codeB === '999999' ? '999998' : '999999';
    for (let i = 1; i <= 4; i++) {
      const r = await call(t, headers, 'POST', `/email-subscriptions/${b.id}/confirm`, { code: wrongB });
      const e = expectError(r, 422, 'validation_failed');
      assert.match(JSON.stringify(e.details), new RegExp(`${5 - i} attempts? left`));
    }
    const fifth = await call(t, headers, 'POST', `/email-subscriptions/${b.id}/confirm`, { code: wrongB });
    assert.match(expectError(fifth, 410, 'gone').error, /create it again/);
    // Even the right code no longer works.
    expectError(await call(t, headers, 'POST', `/email-subscriptions/${b.id}/confirm`, { code: codeB }), 410, 'gone');
    const got = await call(t, headers, 'GET', `/email-subscriptions/${b.id}`);
    assert.equal(got.json<EmailSubscription>().confirmed_at, null);
  });

  it('lists newest first with cursors, updates only the fields sent, deletes', async () => {
    const { headers } = await t.newKey();
    const made: EmailSubscription[] = [];
    for (let i = 0; i < 3; i++) made.push(await subscribe(t, headers, { address: `list${i}@example.com` }));
    const page1 = await call(t, headers, 'GET', '/email-subscriptions?limit=2');
    assert.equal(page1.statusCode, 200);
    const p1 = page1.json<{
      data: EmailSubscription[];
      pagination: { has_more: boolean; next_cursor: string | null; limit: number };
    }>();
    assert.deepEqual(
      p1.data.map((s) => s.id),
      [made[2]!.id, made[1]!.id],
    );
    assert.equal(p1.pagination.has_more, true);
    const page2 = await call(t, headers, 'GET', `/email-subscriptions?limit=2&cursor=${p1.pagination.next_cursor}`);
    assert.deepEqual(
      page2.json<{ data: EmailSubscription[] }>().data.map((s) => s.id),
      [made[0]!.id],
    );

    const patched = await call(t, headers, 'PATCH', `/email-subscriptions/${made[0]!.id}`, {
      digest: 'weekly',
      digest_hour: 23,
      time_zone: 'america/new_york',
    });
    assert.equal(patched.statusCode, 200, patched.body);
    const p = patched.json<EmailSubscription>();
    assert.equal(p.digest, 'weekly');
    assert.equal(p.digest_hour, 23);
    assert.equal(p.time_zone, 'America/New_York');
    assert.equal(p.address, 'list0@example.com');
    assert.deepEqual(p.event_types, ['alert.triggered']);

    const del = await call(t, headers, 'DELETE', `/email-subscriptions/${made[0]!.id}`);
    assert.equal(del.statusCode, 204);
    expectError(await call(t, headers, 'GET', `/email-subscriptions/${made[0]!.id}`), 404, 'not_found');
  });

  it('refuses bad input with one clear error and writes nothing', async () => {
    const { headers, accountId } = await t.newKey();
    const cases: [string, Record<string, unknown>, string][] = [
      ['malformed address', { address: 'not-an-address' }, 'address'],
      ['two @', { address: 'a@b@example.com' }, 'address'],
      ['CR/LF header injection', { address: 'eve@example.com\r\nBcc: victim@example.com' }, 'address'],
      ['LF alone', { address: 'eve@example.com\nX-Evil: 1' }, 'address'],
      ['display name', { address: 'Eve <eve@example.com>' }, 'address'],
      ['comma: two recipients', { address: 'eve@example.com,bob@example.com' }, 'address'],
      ['unknown field', { address: 'ok@example.com', cc: 'x@example.com' }, 'cc'],
      ['bad time zone', { address: 'ok@example.com', time_zone: 'Mars/Olympus' }, 'time_zone'],
      ['digest_hour 24', { address: 'ok@example.com', digest_hour: 24 }, 'digest_hour'],
      ['digest_hour -1', { address: 'ok@example.com', digest_hour: -1 }, 'digest_hour'],
      ['bad digest', { address: 'ok@example.com', digest: 'hourly' }, 'digest'],
      ['unknown event type', { address: 'ok@example.com', event_types: ['price.exploded'] }, 'event_types'],
      ['huge address', { address: `${'a'.repeat(300)}@example.com` }, 'address'],
    ];
    for (const [what, body, field] of cases) {
      const res = await call(t, headers, 'POST', '/email-subscriptions', body);
      const e = expectError(res, 422, 'validation_failed');
      assert.ok(JSON.stringify(e.details ?? []).includes(field), `${what}: ${res.body}`);
    }
    expectError(
      await t.app.inject({ method: 'POST', url: '/api/v1/email-subscriptions', headers, payload: '{"address":' }),
      400,
      'invalid_json',
    );
    const count = await t.rt.db.query<{ n: number }>(
      'select count(*)::int as n from email_subscriptions where account_id = $1',
      [accountId],
    );
    assert.equal(Number(count.rows[0]!.n), 0);
    const mails = await t.rt.db.query<{ n: number }>(
      'select count(*)::int as n from email_messages where account_id = $1',
      [accountId],
    );
    assert.equal(Number(mails.rows[0]!.n), 0);

    const sub = await subscribe(t, headers, { address: 'ok@example.com' });
    expectError(
      await call(t, headers, 'PATCH', `/email-subscriptions/${sub.id}`, { digest_hour: 24 }),
      422,
      'validation_failed',
    );
    expectError(
      await call(t, headers, 'PATCH', `/email-subscriptions/${sub.id}`, { time_zone: 'Nowhere/Else' }),
      422,
      'validation_failed',
    );
    expectError(
      await call(t, headers, 'PATCH', `/email-subscriptions/${sub.id}`, { address: 'new@example.com' }),
      422,
      'validation_failed',
    );
  });

  it("answers another account's subscription 404 everywhere, and a read key 403 on writes", async () => {
    const owner = await t.newKey();
    const other = await t.newKey();
    const sub = await subscribe(t, owner.headers, { address: 'mine@example.com' });
    for (const [method, url, body] of [
      ['GET', `/email-subscriptions/${sub.id}`, undefined],
      ['PATCH', `/email-subscriptions/${sub.id}`, { enabled: false }],
      ['DELETE', `/email-subscriptions/${sub.id}`, undefined],
      ['POST', `/email-subscriptions/${sub.id}/confirm`, { code: '123456' }],
    ] as const) {
      const res = await call(t, other.headers, method, url, body);
      expectError(res, 404, 'not_found');
      assert.ok(!res.body.includes('mine@example.com'));
    }
    const list = await call(t, other.headers, 'GET', '/email-subscriptions');
    assert.deepEqual(list.json<{ data: unknown[] }>().data, []);
    // The owner's subscription is as it was: the wrong-account confirm counted no failure.
    const failures = await t.rt.db.query<{ code_failures: number }>(
      'select code_failures from email_subscriptions where id = $1',
      [sub.id],
    );
    assert.equal(Number(failures.rows[0]!.code_failures), 0);

    const readKey = await createKey(t.rt.db, { plan: 'free', scope: 'read', accountId: owner.accountId });
    const reader = { authorization: `Bearer ${readKey.key}`, 'content-type': 'application/json' };
    expectError(
      await call(t, reader, 'POST', '/email-subscriptions', { address: 'r@example.com' }),
      403,
      'insufficient_scope',
    );
    expectError(
      await call(t, reader, 'PATCH', `/email-subscriptions/${sub.id}`, { enabled: false }),
      403,
      'insufficient_scope',
    );
    expectError(await call(t, reader, 'DELETE', `/email-subscriptions/${sub.id}`), 403, 'insufficient_scope');
    expectError(
      await call(t, reader, 'POST', `/email-subscriptions/${sub.id}/confirm`, { code: '123456' }),
      403,
      'insufficient_scope',
    );
    assert.equal((await call(t, reader, 'GET', '/email-subscriptions')).statusCode, 200);
  });

  it('unsubscribes with the link alone (no key), once; an altered or used link is a clear error that tells nothing', async () => {
    const { headers } = await t.newKey();
    const before = smtp.received.length;
    const sub = await subscribe(t, headers, { address: 'unsub@example.com' });
    await sendNow(t);
    const mail = smtp.since(before).find((m) => m.envelopeTo.includes('unsub@example.com'))!;
    const path = pathOf(unsubscribeLink(mail));
    const token = new URL(unsubscribeLink(mail)).searchParams.get('s')!;

    // Altered: one character of the signature, or of the subscription id.
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'a' ? 'b' : 'a') + s.slice(i + 1);
    for (const bad of [flip(token, token.length - 2), flip(token, 8), token.slice(0, -5), 'garbage']) {
      const res = await t.app.inject({ method: 'GET', url: `/email/unsubscribe?s=${encodeURIComponent(bad)}` });
      const e = expectError(res, 400, 'invalid_request');
      assert.match(e.error, /not valid/);
      assert.ok(!res.body.includes('unsub@example.com') && !res.body.includes(sub.id));
    }
    assert.equal(
      (await call(t, headers, 'GET', `/email-subscriptions/${sub.id}`)).json<EmailSubscription>().enabled,
      true,
    );

    const ok = await t.app.inject({ method: 'GET', url: path, headers: { accept: 'text/html' } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.match(String(ok.headers['content-type']), /^text\/html/);
    assert.match(ok.body, /unsubscribed/i);
    assert.ok(!ok.body.includes('unsub@example.com'));
    const after = (await call(t, headers, 'GET', `/email-subscriptions/${sub.id}`)).json<EmailSubscription>();
    assert.equal(after.enabled, false);

    const again = await t.app.inject({ method: 'GET', url: path });
    assert.match(expectError(again, 410, 'gone').error, /already been used/);
    // A browser asking again gets the same JSON error (our one shape), not a page.
    const againHtml = await t.app.inject({ method: 'GET', url: path, headers: { accept: 'text/html' } });
    assert.match(expectError(againHtml, 410, 'gone').error, /already been used/);

    // Enabling it again needs a new confirmation: a new code is mailed and confirmed_at is cleared.
    const reenable = await call(t, headers, 'PATCH', `/email-subscriptions/${sub.id}`, { enabled: true });
    assert.equal(reenable.statusCode, 200, reenable.body);
    assert.equal(reenable.json<EmailSubscription>().confirmed_at, null);
  });

  it('one-click unsubscribe (RFC 8058): POST with the form body', async () => {
    const { headers } = await t.newKey();
    const before = smtp.received.length;
    const sub = await subscribe(t, headers, { address: 'oneclick@example.com' });
    await sendNow(t);
    const mail = smtp.since(before).find((m) => m.envelopeTo.includes('oneclick@example.com'))!;
    const res = await t.app.inject({
      method: 'POST',
      url: pathOf(unsubscribeLink(mail)),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(Object.keys(res.json()).sort(), ['message', 'unsubscribed']);
    assert.equal(
      (await call(t, headers, 'GET', `/email-subscriptions/${sub.id}`)).json<EmailSubscription>().enabled,
      false,
    );
  });
});
