import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startEmailWork } from '../../src/email/start.js';
import { useTestApp } from '../helpers/app.js';
import { expectError } from '../products/support.js';
import { call } from './support.js';

/** Without SMTP_URL email is off, and the API says so (docs/EMAIL.md). */

const t = useTestApp();

describe('email off (no SMTP_URL)', () => {
  it('refuses to create a subscription with 409 email_disabled, writes nothing, and still lists', async () => {
    const { headers, accountId } = await t.newKey();
    const res = await call(t, headers, 'POST', '/email-subscriptions', { address: 'off@example.com' });
    const err = expectError(res, 409, 'email_disabled');
    assert.match(err.error, /SMTP_URL/);
    const rows = await t.rt.db.query<{ n: number }>(
      'select count(*)::int as n from email_subscriptions where account_id = $1',
      [accountId],
    );
    assert.equal(Number(rows.rows[0]!.n), 0);
    const list = await call(t, headers, 'GET', '/email-subscriptions');
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json(), { data: [], pagination: { limit: 20, has_more: false, next_cursor: null } });
    // Bad input is still a 422 first: the answer names what is wrong with the request.
    expectError(await call(t, headers, 'POST', '/email-subscriptions', { address: 'nope' }), 422, 'validation_failed');
  });

  it('starts no email worker', async () => {
    assert.equal(await startEmailWork(t.rt.config, t.rt.db, t.rt.deploymentKey, pino({ level: 'silent' })), undefined);
  });

  it('reads SMTP_URL, MAIL_FROM and PUBLIC_URL once, refusing bad values with the variable named', () => {
    const c = loadConfig({
      SMTP_URL: 'smtp://user:pw@mail.example:587',
      MAIL_FROM: 'Shop <shop@example.com>',
      PUBLIC_URL: 'https://ph.example/',
    });
    assert.equal(c.smtpUrl, 'smtp://user:pw@mail.example:587');
    assert.equal(c.mailFrom, 'Shop <shop@example.com>');
    assert.equal(c.publicUrl, 'https://ph.example');
    assert.equal(loadConfig({}).smtpUrl, undefined);
    assert.equal(loadConfig({ PORT: '9090' }).publicUrl, 'http://127.0.0.1:9090');
    for (const [name, value] of [
      ['SMTP_URL', 'http://mail.example'],
      ['MAIL_FROM', 'not an address'],
      ['MAIL_FROM', 'a@example.com\r\nBcc: b@example.com'],
      ['PUBLIC_URL', 'ftp://x'],
    ]) {
      assert.throws(
        () => loadConfig({ [name!]: value }),
        (e: unknown) => e instanceof ConfigError && e.variable === name,
        `${name}=${value}`,
      );
    }
  });
});
