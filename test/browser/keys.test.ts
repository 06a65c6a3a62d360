/**
 * The Keys page in Chromium against a real server (test/browser/support.ts): the account's keys
 * listed, a key created with the secret shown once and copied, renamed, revoked after a
 * confirmation, the plan chooser limited to the signed-in key's plan, the API's 422 and 409
 * shown, and a read key told that only full keys manage keys. Screenshots at 1400 and 390 px.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ARTIFACTS, newPage, type Rig, shot, signIn, skipReason, startRig, unexpected } from './support.js';
import type { ApiKeyMaybeSecret } from '../helpers/api-types.js';

/** Resolves once the page has rendered everything it loads (no busy region left). */
const settled = (page: Page) =>
  page.waitForFunction(() => !document.querySelector('main[aria-busy], main [aria-busy=true]'));

/** A dialog as the user sees it: the viewport (a full-page shot leaves the fixed dialog and backdrop where the viewport was). */
async function dialogShot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
}

describe('the Keys page in a browser', { skip: skipReason, timeout: 300_000 }, () => {
  let rig: Rig;
  before(async () => {
    // A starter key signs in: the page may offer free and starter, never business.
    rig = await startRig({ plan: 'starter' });
  });
  after(async () => {
    await rig?.close();
  });

  const keyOf = async (id: string) => (await rig.call<ApiKeyMaybeSecret>('GET', `/api/v1/keys/${id}`)).body;
  const statusWith = async (secret: string, method = 'GET', path = '/api/v1/products') =>
    (
      await fetch(rig.base + path, {
        method,
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: method === 'POST' ? '{"name":"x","base_price":1,"currency":"EUR"}' : undefined,
      })
    ).status;

  it('lists, creates (secret once, copied), renames and revokes keys, at 1400 and 390 px', async () => {
    const reader = (
      await rig.call<ApiKeyMaybeSecret>('POST', '/api/v1/keys', { name: 'Old reader', scope: 'read', plan: 'free' })
    ).body;
    const deploy = (await rig.call<ApiKeyMaybeSecret>('POST', '/api/v1/keys', { name: 'CI deploy', scope: 'full' }))
      .body;
    assert.ok(reader.secret && deploy.secret);

    const { page, dialogs, errors, failed } = await newPage(rig);
    await rig.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: rig.base });
    await page.setViewportSize({ width: 1400, height: 900 });
    await signIn(page, rig.base, rig.key);
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await page.getByRole('button', { name: 'Create key' }).waitFor();

    // The list: every key of the account with its scope, plan and prefix; the signed-in one marked.
    const list = page.getByTestId('keys-list');
    const rows = list.locator('tbody tr');
    assert.equal(await rows.count(), 3);
    assert.match(
      (await rows.nth(0).innerText()).replace(/\s+/g, ' '),
      new RegExp(`CI deploy .*full.*starter.*${deploy.prefix}`),
    );
    assert.match(
      (await rows.nth(1).innerText()).replace(/\s+/g, ' '),
      new RegExp(`Old reader .*read.*free.*${reader.prefix}`),
    );
    assert.match(await rows.nth(2).innerText(), /this key/);
    assert.doesNotMatch(await list.innerText(), /ph_live_[A-Za-z0-9_-]{13}/, 'no secret on the page');

    const form = page.getByRole('form', { name: 'New API key' });
    // The choosers offer only what this key may give: both scopes, plans up to its own.
    const plans = await form
      .getByLabel('Plan')
      .locator('option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    assert.deepEqual(plans, ['free', 'starter']);
    const scopes = await form
      .getByLabel('Scope')
      .locator('option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    assert.deepEqual(scopes.sort(), ['full', 'read']);
    await shot(page, 'keys-1400');

    // A name the API refuses: its message at the field, nothing created, the text never HTML.
    await form.getByLabel('Name').fill('<img src=x onerror=alert(1)>');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText(/must be letters, digits/).waitFor();
    assert.equal(await form.getByLabel('Name').getAttribute('aria-invalid'), 'true');
    assert.equal((await rig.call<{ data: ApiKeyMaybeSecret[] }>('GET', '/api/v1/keys')).body.data.length, 3);

    // Create: the secret once, in a dialog that says so, with a copy button.
    await form.getByLabel('Name').fill('Grafana (read)');
    await form.getByLabel('Scope').selectOption('read');
    await form.getByLabel('Plan').selectOption('free');
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('you will not see it again').waitFor();
    const secret = (await dialog.getByTestId('new-key-secret').innerText()).trim();
    assert.match(secret, /^ph_live_[A-Za-z0-9_-]{43}$/);
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied.').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    await dialogShot(page, 'keys-secret-1400');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });
    // It is a read key of the free plan, and it works.
    assert.equal(await statusWith(secret), 200);
    assert.equal(await statusWith(secret, 'POST'), 403);
    await page.getByTestId('keys-list').getByText('Grafana (read)').waitFor();
    assert.ok(
      !(await page.content()).includes(secret.slice(12)),
      'the secret is gone from the page once the dialog closes',
    );
    assert.equal(await rows.count(), 4);

    // Rename in a dialog.
    await page.getByRole('button', { name: 'Rename CI deploy' }).click();
    const renameDialog = page.getByRole('dialog');
    await renameDialog.getByRole('textbox', { name: 'Name' }).fill('CI deploy (old)');
    await renameDialog.getByRole('button', { name: 'Save' }).click();
    await renameDialog.waitFor({ state: 'detached' });
    await page.getByTestId('keys-list').getByText('CI deploy (old)').waitFor();
    assert.equal((await keyOf(deploy.id)).name, 'CI deploy (old)');

    // Revoke after a confirmation; cancelling changes nothing.
    await page.getByRole('button', { name: 'Revoke Old reader' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await keyOf(reader.id)).revoked_at, null);
    await page.getByRole('button', { name: 'Revoke Old reader' }).click();
    await page.getByRole('dialog').getByText('cannot be undone').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('Key revoked.').waitFor();
    await rows.filter({ hasText: 'Old reader' }).getByText('revoked').waitFor();
    assert.ok((await keyOf(reader.id)).revoked_at);
    assert.equal(await statusWith(reader.secret!), 401);
    assert.equal(
      await rows
        .filter({ hasText: 'Old reader' })
        .getByRole('button', { name: /Revoke/ })
        .count(),
      0,
    );

    // The account's last full key: revoke the other full key, then the signed-in one is refused (409).
    await page.getByRole('button', { name: 'Revoke CI deploy (old)' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await rows.filter({ hasText: 'CI deploy (old)' }).getByText('revoked').waitFor();
    await rows
      .filter({ hasText: 'this key' })
      .getByRole('button', { name: /Revoke/ })
      .click();
    await page.getByRole('dialog').getByText('you will be signed out').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /last full key/ })
      .waitFor();
    assert.equal(await statusWith(rig.key), 200, 'the signed-in key still works');

    await settled(page);
    await shot(page, 'keys-after-1400');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('heading', { level: 1, name: 'API keys' }).scrollIntoViewIfNeeded();
    // Nothing wider than the phone's screen but the table, which scrolls in its own region.
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
    await shot(page, 'keys-390');
    await form.getByLabel('Name').fill('Phone key');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('dialog').getByText('you will not see it again').waitFor();
    await dialogShot(page, 'keys-secret-390');
    await page.getByRole('dialog').getByRole('button', { name: 'Done' }).click();

    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
    assert.deepEqual(unexpected(failed, [/^422 POST .*\/api\/v1\/keys$/, /^409 DELETE .*\/api\/v1\/keys\/key_/]), []);
    await page.close();
  });

  it('a read key sees that only full keys manage keys', async () => {
    const reader = (
      await rig.call<ApiKeyMaybeSecret>('POST', '/api/v1/keys', { name: 'Viewer', scope: 'read', plan: 'free' })
    ).body;
    const { page, errors, failed } = await newPage(rig);
    await page.setViewportSize({ width: 1400, height: 900 });
    await signIn(page, rig.base, reader.secret!);
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await page.getByTestId('keys-read-scope').waitFor();
    assert.match(await page.getByTestId('keys-read-scope').innerText(), /only full keys manage API keys/);
    assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0);
    await shot(page, 'keys-read-key-1400');
    assert.deepEqual(errors, []);
    assert.deepEqual(unexpected(failed, [/^403 GET .*\/api\/v1\/keys/]), []);
    await page.close();
  });
});
