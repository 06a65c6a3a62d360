/**
 * The Alerts and Webhooks pages in Chromium against a real server: a rule made in the form,
 * previewed over last month's prices before it is saved, its event shown and acknowledged after
 * a price that fires it; an endpoint made in the form, a delivery to a receiver on 127.0.0.1 in
 * its log, redelivered, and its secret rotated.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { newPage, type Rig, shot, signIn, skipReason, startRig, unexpected } from './support.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1 that answers `status` (200) and hands over each request as it arrives. */
async function startReceiver() {
  const received: Received[] = [];
  const answer = { status: 200 };
  const waiting: ((r: Received) => void)[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const r = { headers: req.headers, body };
      received.push(r);
      res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.status === 200 ? 'thanks' : 'broken');
      waiting.shift()?.(r);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/pricehound`,
    received,
    answer,
    /** The next request (or the one already there beyond `seen`). */
    next(seen: number): Promise<Received> {
      if (received.length > seen) return Promise.resolve(received[seen]!);
      return new Promise((resolve) => waiting.push(resolve));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Polls `fn` until it returns a value: for state the server writes after answering (a delivery's
 * outcome is recorded after the receiver's answer), which no event tells the test about.
 */
async function until<T>(fn: () => Promise<T | undefined>, what: string, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await delay(100);
  }
}

describe('alerts and webhooks in the dashboard', { skip: skipReason, timeout: 300_000 }, () => {
  let rig: Rig;
  before(async () => {
    // One retry, soon: a failing delivery has failed for good within the test.
    rig = await startRig({ env: { WEBHOOK_RETRY_SCHEDULE: '200ms' } });
  });
  after(async () => {
    await rig?.close();
  });

  it('creates a rule after previewing last month, shows the event a price fires, and acknowledges it', async () => {
    const product = (
      await rig.call<{ id: string }>('POST', '/api/v1/products', { name: 'Kettle', base_price: 50, currency: 'EUR' })
    ).body;
    const rival = (
      await rig.call<{ id: string }>('POST', '/api/v1/competitors', { name: 'Rival', website: 'https://rival.example' })
    ).body;
    const day = 86_400_000;
    const ago = (days: number) => new Date(Date.now() - days * day).toISOString();
    // Last month: 50, then 44 (below 45: the preview's one firing), then 47.
    const past = await rig.call<{ created: number }>('POST', '/api/v1/prices', {
      observations: [50, 44, 47].map((price, i) => ({
        product_id: product.id,
        competitor_id: rival.id,
        price,
        currency: 'EUR',
        in_stock: true,
        observed_at: ago(20 - i * 5),
      })),
    });
    assert.equal(past.body.created, 3);

    const { page, dialogs, errors, failed } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alerts' }).click();
    const form = page.getByRole('form', { name: 'New alert rule' });
    await form.getByLabel('Name').fill('Kettle below 45');
    // The choosers search as you type and are picked with the keyboard (the combobox pattern).
    const productBox = form.getByRole('combobox', { name: 'Product' });
    await productBox.fill('kett');
    await form.getByRole('option', { name: /Kettle/ }).waitFor();
    await productBox.press('ArrowDown');
    await productBox.press('Enter');
    assert.equal(await productBox.inputValue(), 'Kettle');
    const sellerBox = form.getByRole('combobox', { name: 'Seller' });
    await sellerBox.fill('riv');
    await form.getByRole('option', { name: /Rival/ }).click();
    assert.equal(await sellerBox.inputValue(), 'Rival');
    await form.getByLabel('When').selectOption('price_below');
    await form.getByLabel(/^Threshold/).fill('45');
    await form.getByRole('button', { name: 'Preview the last 30 days' }).click();
    const preview = page.getByTestId('alert-preview');
    await preview.getByText('Would have fired 1 time in the last 30 days').waitFor();
    assert.match((await preview.locator('li').first().textContent()) ?? '', /44/);
    assert.equal(
      (await rig.call<{ data: unknown[] }>('GET', '/api/v1/alerts')).body.data.length,
      0,
      'a preview saves nothing',
    );
    await shot(page, 'alert-preview');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('cell', { name: 'Kettle below 45' }).waitFor();
    const rules = (
      await rig.call<{ data: { name: string; condition: { type: string; threshold: number } }[] }>(
        'GET',
        '/api/v1/alerts',
      )
    ).body.data;
    assert.deepEqual(
      rules.map((r) => [r.name, r.condition.type, r.condition.threshold]),
      [['Kettle below 45', 'price_below', 45]],
    );

    // Now 46 (above), then 43: the rule fires once, in the same transaction as the price.
    await rig.call('POST', '/api/v1/prices', {
      observations: [46, 43].map((price, i) => ({
        product_id: product.id,
        competitor_id: rival.id,
        price,
        currency: 'EUR',
        in_stock: true,
        observed_at: new Date(Date.now() - (2 - i) * 60_000).toISOString(),
      })),
    });
    await page.getByRole('button', { name: 'Refresh events' }).click();
    const events = page.getByTestId('alert-events');
    const row = events.getByRole('row').filter({ hasText: '43' });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /Kettle/);
    await shot(page, 'alert-event');
    await row.getByRole('button', { name: 'Acknowledge' }).click();
    await events.getByText('No open events.').waitFor();
    const acked = (
      await rig.call<{ data: { acknowledged_at: string | null }[] }>(
        'GET',
        `/api/v1/alert-events?product_id=${product.id}`,
      )
    ).body.data;
    assert.equal(acked.length, 1);
    assert.ok(acked[0]!.acknowledged_at);

    // The product's chart marks the firing.
    await page.goto(`${rig.base}/dashboard/#/products/${product.id}`);
    await page.getByTestId('alert-firings').getByText(/43/).waitFor();

    // The rule's row: Disable, then Delete after confirming; the API agrees each time.
    await page.goto(`${rig.base}/dashboard/#/alerts`);
    const ruleRow = page.getByRole('row').filter({ hasText: 'Kettle below 45' });
    await ruleRow.getByRole('button', { name: 'Disable' }).click();
    await ruleRow.getByRole('button', { name: 'Enable' }).waitFor();
    const rulesNow = async () => (await rig.call<{ data: { enabled: boolean }[] }>('GET', '/api/v1/alerts')).body.data;
    assert.deepEqual(
      (await rulesNow()).map((r) => r.enabled),
      [false],
    );
    await ruleRow.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Please confirm' }).getByRole('button', { name: 'Delete rule' }).click();
    await page.getByText('No rules yet: create one below.').waitFor();
    assert.deepEqual(await rulesNow(), []);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
    assert.deepEqual(unexpected(failed), []);
    await page.close();
  });

  it('shows the series that already meet the condition as the form changes, and fires them when asked, at 1400 and 390 px', async () => {
    const product = (
      await rig.call<{ id: string }>('POST', '/api/v1/products', { name: 'Teapot', base_price: 30, currency: 'EUR' })
    ).body;
    const rivals: string[] = [];
    for (const name of ['Alpha Tea', 'Beta Tea'])
      rivals.push(
        (await rig.call<{ id: string }>('POST', '/api/v1/competitors', { name, website: 'https://tea.example' })).body
          .id,
      );
    // Alpha sells at 24.50 (below 25 and under our 30), Beta at 31.
    await rig.call('POST', '/api/v1/prices', {
      observations: [24.5, 31].map((price, i) => ({
        product_id: product.id,
        competitor_id: rivals[i],
        price,
        currency: 'EUR',
        in_stock: true,
        observed_at: new Date(Date.now() - 3_600_000).toISOString(),
      })),
    });
    const { page, dialogs, errors, failed } = await newPage(rig);
    await signIn(page, rig.base, rig.key);
    for (const [width, fire] of [
      [1400, true],
      [390, false],
    ] as const) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${rig.base}/dashboard/#/alerts?product_id=${product.id}`);
      const form = page.getByRole('form', { name: 'New alert rule' });
      await form.getByLabel('Name').fill(`Teapot under 25 (${width})`);
      await form.getByLabel('When').selectOption('price_below');
      const threshold = form.getByLabel(/^Threshold/);
      await threshold.fill('25');
      const matches = page.getByTestId('alert-matches');
      await matches.getByText('1 series already meets this condition.').waitFor();
      const row = matches.getByRole('row').filter({ hasText: 'Alpha Tea' });
      const text = (await row.textContent()) ?? '';
      assert.match(text, /Teapot/);
      assert.match(text, /24[.,]50/, 'the price with its currency decimals');
      // The list follows the form: 35 takes in Beta too; "undercut" both... then back to 25.
      await threshold.fill('35');
      await matches.getByText('2 series already meet this condition.').waitFor();
      await form.getByLabel('When').selectOption('undercut');
      await matches.getByText('1 series already meets this condition.').waitFor();
      await form.getByLabel('When').selectOption('price_below');
      await form.getByLabel(/^Threshold/).fill('25');
      await matches.getByText('1 series already meets this condition.').waitFor();
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      assert.ok(overflow <= 0, `no horizontal scroll at ${width} px: ${overflow}`);
      await shot(page, `alert-matches-${width}`);
      const box = form.getByLabel('Also alert for these now');
      assert.equal(await box.isChecked(), false, 'off by default');
      if (fire) await box.check();
      await form.getByRole('button', { name: 'Create rule' }).click();
      await page.getByText(`Created the rule “Teapot under 25 (${width})”.`).waitFor();
      const rule = (
        await rig.call<{ data: { id: string; name: string }[] }>('GET', `/api/v1/alerts?product_id=${product.id}`)
      ).body.data.find((r) => r.name === `Teapot under 25 (${width})`);
      assert.ok(rule);
      const fired = (
        await rig.call<{ data: { competitor_id: string; current: { price: number } }[] }>(
          'GET',
          `/api/v1/alert-events?alert_id=${rule.id}`,
        )
      ).body.data;
      assert.deepEqual(
        fired.map((e) => [e.competitor_id, e.current.price]),
        fire ? [[rivals[0], 24.5]] : [],
      );
    }
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
    assert.deepEqual(unexpected(failed, [/422 POST .*\/alerts\/matches/]), []);
    await page.close();
  });

  it('adds an endpoint, shows a delivery to 127.0.0.1 in its log, redelivers it and rotates the secret', async () => {
    const receiver = await startReceiver();
    try {
      const { page, dialogs, errors, failed } = await newPage(rig);
      await signIn(page, rig.base, rig.key);
      await page.goto(`${rig.base}/dashboard/#/webhooks`);
      const form = page.getByRole('form', { name: 'New webhook endpoint' });
      await form.getByLabel(/^URL/).fill(receiver.url);
      await form.getByLabel('Description').fill('Test receiver');
      await form.getByRole('button', { name: 'Add endpoint' }).click();
      const secretDialog = page.getByRole('dialog', { name: /signing secret/ });
      const secret = (await secretDialog.getByTestId('webhook-secret').textContent()) ?? '';
      assert.match(secret, /^whsec_[A-Za-z0-9+/=]+$/);
      await secretDialog.getByRole('button', { name: 'Done' }).click();

      const endpoints = (
        await rig.call<{ data: { id: string; url: string; secret?: string }[] }>('GET', '/api/v1/webhooks')
      ).body.data;
      assert.deepEqual(
        endpoints.map((w) => [w.url, w.secret]),
        [[receiver.url, undefined]],
      );
      await page.getByRole('button', { name: 'Send test' }).click();
      const first = await receiver.next(0);
      assert.match(first.body, /"type":"webhook\.test"/);
      assert.ok(first.headers['webhook-signature']);
      const eventId = String(first.headers['webhook-id']);
      const id = endpoints[0]!.id;
      await until(async () => {
        const d = (await rig.call<{ data: { status: string }[] }>('GET', `/api/v1/webhooks/${id}/deliveries`)).body
          .data;
        return d.some((x) => x.status === 'succeeded') ? true : undefined;
      }, 'the delivery to be recorded');
      await page.getByRole('button', { name: 'Refresh' }).click();
      const log = page.getByTestId('deliveries');
      const row = log.getByRole('row').filter({ hasText: eventId });
      await row.filter({ hasText: 'succeeded' }).waitFor();
      assert.match((await row.textContent()) ?? '', /HTTP 200/);
      await shot(page, 'webhook-deliveries');

      await row.getByRole('button', { name: 'Redeliver' }).click();
      const second = await receiver.next(1);
      assert.equal(second.headers['webhook-id'], eventId, 'the same event, again');
      await until(async () => {
        const d = (
          await rig.call<{ data: { trigger: string; status: string }[] }>('GET', `/api/v1/webhooks/${id}/deliveries`)
        ).body.data;
        return d.some((x) => x.trigger === 'manual' && x.status === 'succeeded') ? true : undefined;
      }, 'the manual delivery to be recorded');

      await page.getByRole('button', { name: 'Rotate secret' }).click();
      await page.getByRole('dialog', { name: 'Please confirm' }).getByRole('button', { name: 'Rotate' }).click();
      const rotated =
        (await page.getByRole('dialog', { name: 'New signing secret' }).getByTestId('webhook-secret').textContent()) ??
        '';
      assert.match(rotated, /^whsec_/);
      assert.notEqual(rotated, secret);
      assert.deepEqual(dialogs, []);
      assert.deepEqual(errors, []);
      assert.deepEqual(unexpected(failed), []);
      await page.close();
    } finally {
      await receiver.close();
    }
  });

  it('replays the failed deliveries of a range from the log', async () => {
    const receiver = await startReceiver();
    receiver.answer.status = 500;
    try {
      const made = await rig.call<{ id: string }>('POST', '/api/v1/webhooks', {
        url: receiver.url,
        description: 'Flaky receiver',
        event_types: ['webhook.test'],
      });
      assert.equal(made.status, 201);
      const id = made.body.id;
      const test = await rig.call<{ id: string }>('POST', `/api/v1/webhooks/${id}/test`);
      assert.equal(test.status, 202);
      // The first attempt and its one retry both get 500: the event has failed.
      await until(async () => {
        const d = (await rig.call<{ data: { status: string }[] }>('GET', `/api/v1/webhooks/${id}/deliveries`)).body
          .data;
        return d.length === 2 && d.every((x) => x.status === 'failed') ? true : undefined;
      }, 'both attempts to fail');
      receiver.answer.status = 200;

      const { page, dialogs, errors, failed } = await newPage(rig);
      await signIn(page, rig.base, rig.key);
      await page.goto(`${rig.base}/dashboard/#/webhooks?id=${id}&status=failed`);
      const log = page.getByTestId('deliveries');
      await log.getByRole('row').filter({ hasText: 'HTTP 500' }).first().waitFor();
      assert.equal(
        await log.getByRole('row').filter({ hasText: 'succeeded' }).count(),
        0,
        'the failed filter shows failures only',
      );
      await page.getByRole('button', { name: 'Redeliver failed events in this range' }).click();
      await page.getByTestId('replay-result').getByText('Queued 1 failed event again.').waitFor();
      const third = await receiver.next(2);
      assert.equal(third.headers['webhook-id'], test.body.id);
      await until(async () => {
        const d = (
          await rig.call<{ data: { trigger: string; status: string; attempt: number }[] }>(
            'GET',
            `/api/v1/webhooks/${id}/deliveries?status=succeeded`,
          )
        ).body.data;
        return d.length === 1 && d[0]!.trigger === 'manual' && d[0]!.attempt === 3 ? true : undefined;
      }, 'the replayed attempt to succeed');
      await page.getByRole('navigation', { name: 'Which attempts' }).getByRole('link', { name: 'Succeeded' }).click();
      await log.getByRole('row').filter({ hasText: 'HTTP 200' }).filter({ hasText: '3 (manual)' }).waitFor();
      await shot(page, 'webhook-replay');
      assert.deepEqual(dialogs, []);
      assert.deepEqual(errors, []);
      assert.deepEqual(unexpected(failed), []);
      await page.close();
    } finally {
      await receiver.close();
    }
  });
});
