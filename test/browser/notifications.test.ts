/**
 * The Notifications page in Chromium against a real server whose worker mails over SMTP to a
 * real SMTP server of the test (smtp-server, test/email/support.ts): an address subscribed, the
 * code read from the mail that arrived and entered (a wrong one first), the digest and time
 * zone edited (a bad zone refused at its field), the subscription deleted. Screenshots at 1400
 * and 390 px.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { codeOf, smtpServer } from '../email/support.js';
import { newPage, type Rig, shot, signIn, skipReason, startRig, unexpected } from './support.js';

const settled = (page: Page) =>
  page.waitForFunction(() => !document.querySelector('main[aria-busy], main [aria-busy=true]'));

describe('the Notifications page in a browser', { skip: skipReason, timeout: 300_000 }, () => {
  const env: Record<string, string> = { MAIL_FROM: 'alerts@pricehound.test' };
  const smtp = smtpServer(env);
  let rig: Rig;
  before(async () => {
    await smtp.start();
    rig = await startRig({ env });
  });
  after(async () => {
    await rig?.close();
    await smtp.stop();
  });

  it('subscribes an address, confirms it with the mailed code, edits its digest and deletes it, at 1400 and 390 px', async () => {
    const { page, dialogs, errors, failed } = await newPage(rig);
    await page.setViewportSize({ width: 1400, height: 900 });
    await signIn(page, rig.base, rig.key);
    await page.getByRole('link', { name: 'Notifications', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Notifications' }).waitFor();
    await page.getByText('No subscriptions yet').waitFor();

    // Create: a daily digest at 07:00 in Berlin.
    const form = page.getByRole('form', { name: 'New email subscription' });
    await form.getByLabel('Address').fill('merchant@example.com');
    await form.getByLabel('Delivery').selectOption('daily');
    await form.getByLabel('Digest hour').selectOption('7');
    await form.getByLabel('Time zone').fill('Europe/Berlin');
    await form.getByRole('button', { name: 'Add address' }).click();
    const confirm = page.getByRole('form', { name: 'Confirm with the code' });
    await confirm.waitFor();
    const list = page.getByTestId('subscriptions');
    await list.getByText('awaiting code').waitFor();
    assert.match(await list.innerText(), /merchant@example\.com[\s\S]*daily at 07:00 Europe\/Berlin/);

    // The worker mailed the code: read it where it arrived.
    await smtp.waitFor(() => smtp.to('merchant@example.com').length > 0);
    const code = codeOf(smtp.to('merchant@example.com')[0]!);
    const wrong = code === '000000' ? '000001' : '000000';
    await confirm.getByLabel('Code from the mail').fill(wrong);
    await confirm.getByRole('button', { name: 'Confirm' }).click();
    await page.getByText(/4 attempts left/).waitFor();
    await confirm.getByLabel('Code from the mail').fill(code);
    await confirm.getByRole('button', { name: 'Confirm' }).click();
    await list.getByText('active').waitFor();
    await settled(page);
    await shot(page, 'notifications-1400');

    const subs = (
      await rig.call<{ data: { id: string; confirmed_at: string | null }[] }>('GET', '/api/v1/email-subscriptions')
    ).body.data;
    assert.equal(subs.length, 1);
    assert.ok(subs[0]!.confirmed_at, 'confirmed through the page');

    // Edit: a bad zone is refused at its field; a good one saved.
    const settings = page.getByRole('form', { name: 'Subscription settings' });
    await settings.getByLabel('Time zone').fill('Mars/Olympus');
    await settings.getByRole('button', { name: 'Save' }).click();
    await settings.getByText(/not an IANA time zone/).waitFor();
    await settings.getByLabel('Delivery').selectOption('weekly');
    await settings.getByLabel('Digest hour').selectOption('9');
    await settings.getByLabel('Time zone').fill('America/New_York');
    await settings.getByRole('button', { name: 'Save' }).click();
    await list.getByText('weekly at 09:00 America/New_York').waitFor();

    await page.setViewportSize({ width: 390, height: 844 });
    await settled(page);
    await shot(page, 'notifications-390');
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow} px at 390`);
    await page.setViewportSize({ width: 1400, height: 900 });

    // Disable, then enable again: the row and the API agree.
    await list.getByRole('button', { name: 'Disable' }).click();
    await list.getByRole('button', { name: 'Enable' }).waitFor();
    const disabled = await rig.call<{ data: { enabled: boolean }[] }>('GET', '/api/v1/email-subscriptions');
    assert.equal(disabled.body.data[0]!.enabled, false);
    await list.getByRole('button', { name: 'Enable' }).click();
    await list.getByRole('button', { name: 'Disable' }).waitFor();
    const enabled = await rig.call<{ data: { enabled: boolean }[] }>('GET', '/api/v1/email-subscriptions');
    assert.equal(enabled.body.data[0]!.enabled, true);

    // Delete after a confirmation.
    await list.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete subscription' }).click();
    await page.getByText('No subscriptions yet').waitFor();
    assert.equal((await rig.call<{ data: unknown[] }>('GET', '/api/v1/email-subscriptions')).body.data.length, 0);

    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
    assert.deepEqual(unexpected(failed, [/^422 POST .*\/confirm$/, /^422 PATCH .*\/email-subscriptions\//]), []);
    await page.close();
  });
});
