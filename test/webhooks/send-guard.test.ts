import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AddressGuard } from '../../src/fetcher/address-guard.js';
import { WebhookSender } from '../../src/webhooks/delivery/send.js';
import { tableLookup } from '../fetcher/helpers/fetcher.js';
import { type Receiver, startReceiver } from './receiver.js';

/**
 * A webhook endpoint cannot reach a private address through DNS (issue 12, security review):
 * the endpoint's host is resolved and checked when each attempt connects, and the socket goes to
 * the address that was checked. Names are resolved by a table (no DNS traffic); the only
 * socket is to the receiver on 127.0.0.1.
 */
describe('webhook sends: the address guard at connect time', () => {
  let rx: Receiver;
  before(async () => {
    rx = await startReceiver();
  });
  after(async () => {
    await rx?.close();
  });

  const send = (sender: WebhookSender, host: string) =>
    sender.send({ url: `http://${host}:${rx.port}/hook`, body: '{}', headers: { 'content-type': 'application/json' } });

  it('a name resolving to a private address is refused before a socket is opened', async () => {
    const guard = new AddressGuard({ allowLoopback: false, lookup: tableLookup({ 'hooks.test': ['10.1.2.3'] }) });
    const sender = new WebhookSender({ allowLoopback: false, timeoutMs: 2_000, guard });
    const before = rx.received.length;
    const r = await send(sender, 'hooks.test');
    assert.equal(r.status, undefined);
    assert.match(r.error ?? '', /^blocked_address: hooks\.test resolves to a private network address;/);
    assert.doesNotMatch(r.error ?? '', /10\.1\.2\.3/, 'the delivery log does not tell what the name resolved to');
    assert.equal(rx.received.length, before, 'nothing was sent');
  });

  it('a name that re-resolves to a private address after its check (DNS rebinding) is refused at connect', async () => {
    let calls = 0;
    const lookup = tableLookup({ 'rebind.test': () => (++calls === 1 ? ['127.0.0.1'] : ['10.0.0.1']) });
    const guard = new AddressGuard({ allowLoopback: true, lookup, cacheTtlMs: 0 });
    const sender = new WebhookSender({ allowLoopback: true, timeoutMs: 2_000, guard });
    const before = rx.received.length;
    // The first answer (loopback, allowed here) is not the one connected to: the connect step
    // resolves again, gets 10.0.0.1, and refuses.
    const r = await send(sender, 'rebind.test');
    assert.equal(r.status, undefined);
    assert.match(r.error ?? '', /rebind\.test resolves to a private network address/);
    assert.ok((lookup.calls.get('rebind.test') ?? 0) >= 2, 'resolved again when connecting');
    assert.equal(rx.received.length, before, 'nothing was sent');
  });
});
