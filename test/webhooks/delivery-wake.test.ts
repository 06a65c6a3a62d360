import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextWakeInMs } from '../../src/webhooks/delivery/sql.js';
import { useTestApp } from '../helpers/app.js';
import { createEndpoint, createProduct, DELIVERY_ENV } from './delivery-support.js';

/**
 * The delivery worker's one timer (src/webhooks/delivery/worker.ts) is set from nextWakeInMs.
 * "Nothing is waiting" must be null: when it came out as 0, every idle worker claimed again at
 * once, forever, and kept a core (and the embedded database's only connection) busy.
 */

const t = useTestApp(DELIVERY_ENV);

describe('when an idle delivery worker looks again', () => {
  it('never, with no pending attempt anywhere', async () => {
    assert.equal(await nextWakeInMs(t.rt.db), null);
  });

  it('at once for an endpoint that is up, at its probe for one that is down', async () => {
    const key = await t.newKey();
    // Nothing listens there: no worker runs in this file, so nothing is sent.
    const ep = await createEndpoint(t, key, { url: 'http://127.0.0.1:9/hook' });
    await createProduct(t, key.headers);
    assert.equal(await nextWakeInMs(t.rt.db), 0);

    await t.rt.db.query(
      `update webhook_endpoints set failing_since = now(), probe_at = now() + interval '1 hour' where id = $1`,
      [ep.id],
    );
    const ms = await nextWakeInMs(t.rt.db);
    assert.ok(ms !== null && ms > 3_590_000 && ms <= 3_600_000, String(ms));
  });
});
