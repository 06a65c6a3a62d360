import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';

/** Parses one sample's value from Prometheus text, matching a metric name and every label given. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf('}'));
    if (Object.entries(labels).every(([k, v]) => body.includes(`${k}="${v}"`)))
      return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('operations endpoints', () => {
  const t = useTestApp();

  it('/healthz answers 200 without a key', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(r.statusCode, 200);
    assert.deepEqual(r.json(), { status: 'ok' });
  });

  it('/readyz answers 200 naming the database when it is reachable', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(r.statusCode, 200);
    assert.equal(r.json().status, 'ok');
    assert.equal(r.json().database, t.storage.kind);
  });

  it('/readyz answers 503 with the JSON error body when the database is gone', async () => {
    // A second runtime on its own storage whose database we close under it: nothing is stubbed.
    const { testStorage } = await import('../helpers/database.js');
    const { loadConfig } = await import('../../src/config.js');
    const { createRuntime } = await import('../../src/runtime.js');
    const { buildApp } = await import('../../src/app.js');
    const pino = (await import('pino')).default;
    const storage = await testStorage();
    const rt = await createRuntime(loadConfig(storage.env), pino({ level: 'silent' }));
    const app = await buildApp(rt);
    try {
      await rt.db.close();
      const r = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(r.statusCode, 503);
      assert.equal(r.json().code, 'unavailable');
      assert.equal(typeof r.json().request_id, 'string');
    } finally {
      await app.close();
      await rt.close();
      await storage.cleanup();
    }
  });

  it('/metrics counts requests and observes latency by method, route pattern and status', async () => {
    const { headers } = await t.newKey();
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers,
      payload: { name: 'Lamp', base_price: 5, currency: 'EUR' },
    });
    assert.equal(created.statusCode, 201);
    const id = created.json().id as string;
    const before = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const labels = { method: 'GET', route: '/api/v1/products/:id', status_code: '200' };
    const count0 = sample(before, 'pricehound_http_requests_total', labels) ?? 0;
    const hist0 = sample(before, 'pricehound_http_request_duration_seconds_count', labels) ?? 0;

    for (let i = 0; i < 3; i++)
      assert.equal((await t.app.inject({ method: 'GET', url: `/api/v1/products/${id}`, headers })).statusCode, 200);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/api/v1/products/prod_0000000000000000000000000x', headers }))
        .statusCode,
      404,
    );
    await t.app.inject({ method: 'GET', url: '/no/such/path/123' });

    const r = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(r.statusCode, 200);
    assert.match(String(r.headers['content-type']), /^text\/plain/);
    assert.equal(sample(r.body, 'pricehound_http_requests_total', labels), count0 + 3);
    assert.equal(sample(r.body, 'pricehound_http_request_duration_seconds_count', labels), hist0 + 3);
    assert.ok(sample(r.body, 'pricehound_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })! >= 3);
    assert.equal(
      sample(r.body, 'pricehound_http_requests_total', { route: '/api/v1/products/:id', status_code: '404' }),
      1,
    );
    // Unknown paths share one label: a scanner cannot create a series per path.
    assert.ok(sample(r.body, 'pricehound_http_requests_total', { route: 'unmatched', status_code: '404' })! >= 1);
    assert.ok(!r.body.includes('/no/such/path'));
    // Node's process metrics come along.
    assert.match(r.body, /^pricehound_process_resident_memory_bytes \d+/m);
  });
});
