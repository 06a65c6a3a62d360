import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';

// Issue 27: tenant isolation for EVERY operation of the OpenAPI document, walked from the
// document itself (as read-scope.test.ts does for read keys): account B calls each operation
// with account A's ids in every path parameter (and in the body's id fields), and gets the
// answer CASES names, sees none of A's ids, and changes nothing of A's. An operation added
// later has no case and fails here by name until someone says what B must get.

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface Param {
  name: string;
  in: string;
  schema: { pattern?: string; format?: string };
}
interface Operation {
  operationId: string;
  security?: unknown[];
  parameters?: Param[];
}
type Doc = { paths: Record<string, Record<string, Operation>> };
type Ids = Record<string, string>;

/**
 * What account B gets for each operation given A's ids (404 where the path names A's resource:
 * never 403, which would say it exists), and the body it sends (A's ids in its id fields).
 * Operations on B's own collection (lists, creates without A's ids) answer as usual; what
 * matters there is that none of A's ids shows and nothing of A's changes.
 */
const CASES: Record<string, { status: number[]; body?: (a: Ids) => unknown }> = {
  listAlertEvents: { status: [200] },
  getAlertEvent: { status: [404] },
  acknowledgeAlertEvent: { status: [404] },
  acknowledgeAlertEvents: { status: [200, 404, 422], body: (a) => ({ ids: [a.alev] }) },
  listAlerts: { status: [200] },
  createAlert: {
    status: [404, 422],
    body: (a) => ({ name: 'B', product_id: a.prod, condition: { type: 'price_below', threshold: 10 } }),
  },
  getAlert: { status: [404] },
  updateAlert: { status: [404], body: () => ({ name: 'B was here' }) },
  patchAlert: { status: [404], body: () => ({ name: 'B was here' }) },
  deleteAlert: { status: [404] },
  testAlert: { status: [404], body: () => ({}) },
  previewAlert: {
    status: [404, 422],
    body: (a) => ({ product_id: a.prod, condition: { type: 'price_below', threshold: 10 } }),
  },
  // Another account's product in the scope: the 422 naming product_id that POST /alerts answers.
  matchAlert: {
    status: [422],
    body: (a) => ({ name: 'B', product_id: a.prod, condition: { type: 'price_below', threshold: 10 } }),
  },
  listCompetitors: { status: [200] },
  createCompetitor: { status: [201], body: () => ({ name: 'B rival', website: 'https://b-rival.example/' }) },
  getCompetitor: { status: [404] },
  updateCompetitor: { status: [404], body: () => ({ name: 'B was here' }) },
  patchCompetitor: { status: [404], body: () => ({ name: 'B was here' }) },
  deleteCompetitor: { status: [404] },
  getCompetitorAnalysis: { status: [404] },
  listCompetitorListings: { status: [404] },
  listEmailSubscriptions: { status: [200] },
  createEmailSubscription: { status: [201, 409], body: () => ({ address: 'b@example.com' }) }, // 409: email off in tests
  getEmailSubscription: { status: [404] },
  updateEmailSubscription: { status: [404], body: () => ({ enabled: false }) },
  deleteEmailSubscription: { status: [404] },
  confirmEmailSubscription: { status: [404], body: () => ({ code: '123456' }) },
  listEvents: { status: [200] },
  getEvent: { status: [404] },
  listExchangeRates: { status: [200] },
  getExchangeRate: { status: [404] },
  putExchangeRate: { status: [200, 201], body: () => ({ rate: 2 }) }, // B's own rate for the pair; A's stays
  deleteExchangeRate: { status: [204, 404] }, // B's own (set just before), never A's
  extractPrice: { status: [200, 422], body: () => ({ html: '<p>9.99 EUR</p>' }) },
  listApiKeys: { status: [200] },
  createApiKey: { status: [201], body: () => ({ name: 'B key' }) },
  getApiKey: { status: [404] },
  updateApiKey: { status: [404], body: () => ({ name: 'B was here' }) },
  revokeApiKey: { status: [404] },
  listListings: { status: [200] },
  batchCreateListings: {
    status: [200, 201, 207, 422],
    body: (a) => ({ listings: [{ product_id: a.prod, url: 'https://b.example/kettle' }] }),
  },
  createListing: {
    status: [404, 422],
    body: (a) => ({ product_id: a.prod, competitor_id: a.comp, url: 'https://b.example/kettle', enabled: false }),
  },
  getListing: { status: [404] },
  updateListing: { status: [404], body: () => ({ enabled: false }) },
  patchListing: { status: [404], body: () => ({ enabled: false }) },
  deleteListing: { status: [404] },
  checkListing: { status: [404], body: () => ({}) },
  listListingChecks: { status: [404] },
  acceptHeldCheck: { status: [404], body: () => ({}) },
  rejectHeldCheck: { status: [404], body: () => ({}) },
  listPositions: { status: [200] },
  getPositionsSummary: { status: [200] },
  listPriceChanges: { status: [200, 404, 422] },
  summarizePriceChanges: { status: [200, 404, 422] },
  ingestPrices: {
    status: [200, 207, 404, 422],
    body: (a) => ({ items: [{ product_id: a.prod, competitor_id: a.comp, price: 1, currency: 'EUR' }] }),
  },
  exportAccountPricesCsv: { status: [200] },
  listProducts: { status: [200] },
  createProduct: { status: [201], body: () => ({ name: 'B kettle', base_price: 1, currency: 'EUR' }) },
  exportProductCatalogueCsv: { status: [200] },
  getProduct: { status: [404] },
  updateProduct: { status: [404], body: () => ({ name: 'B was here' }) },
  patchProduct: { status: [404], body: () => ({ name: 'B was here' }) },
  deleteProduct: { status: [404] },
  listProductListings: { status: [404] },
  getPriceHistory: { status: [404] },
  exportPriceHistoryCsv: { status: [404] },
  getProductTrends: { status: [404] },
  batchCreateProducts: {
    status: [200, 201, 207],
    body: () => ({ products: [{ name: 'B batch', base_price: 1, currency: 'EUR' }] }),
  },
  getUsage: { status: [200] },
  listWebhooks: { status: [200] },
  createWebhook: { status: [201], body: () => ({ url: 'https://b-hooks.example/in' }) },
  getWebhook: { status: [404] },
  updateWebhook: { status: [404], body: () => ({ description: 'B was here' }) },
  patchWebhook: { status: [404], body: () => ({ description: 'B was here' }) },
  deleteWebhook: { status: [404] },
  listWebhookDeliveries: { status: [404] },
  redeliverWebhookEvents: { status: [404], body: (a) => ({ event_id: a.evt }) },
  rotateWebhookSecret: { status: [404], body: () => ({}) },
  testWebhook: { status: [404], body: () => ({}) },
};

/** A's value for a path parameter: its id of that kind, found by the parameter's pattern. */
function paramValue(p: Param | undefined, a: Ids, where: string): string {
  if (p?.schema.format === 'iso4217' || p?.name === 'base' || p?.name === 'quote')
    return p?.name === 'base' ? 'EUR' : 'USD';
  const prefix = /^\^([a-z]+)_/.exec(p?.schema.pattern ?? '')?.[1];
  const id = prefix ? a[prefix] : undefined;
  assert.ok(
    id,
    `${where}: no id of account A for path parameter ${p?.name} (pattern ${p?.schema.pattern}); add one to the suite's fixture`,
  );
  return id;
}

describe("tenancy: every operation of the OpenAPI document with another account's ids", () => {
  const t = useTestApp();

  it(
    "answers 404 (or the case's code), shows none of A's ids and changes nothing of A's",
    { timeout: 120_000 },
    async () => {
      const a = await t.newKey('business');
      const b = await t.newKey('business');
      const call = async (key: { headers: Record<string, string> }, method: Method, url: string, payload?: unknown) =>
        t.app.inject({
          method,
          url: `/api/v1${url}`,
          headers: key.headers,
          ...(payload === undefined ? {} : { payload: payload as object }),
        });
      const made = async (url: string, payload: unknown) => {
        const res = await call(a, 'POST', url, payload);
        assert.equal(res.statusCode, 201, `${url}: ${res.body}`);
        return res.json<{ id: string }>().id;
      };
      // A's fixture: one resource of every kind a path names.
      const ids: Ids = {};
      ids.prod = await made('/products', { name: 'A kettle', base_price: 50, currency: 'EUR' });
      ids.comp = await made('/competitors', { name: 'A rival', website: 'https://a-rival.example/' });
      ids.lst = await made('/listings', {
        product_id: ids.prod,
        competitor_id: ids.comp,
        url: 'https://a-rival.example/kettle',
        enabled: false,
      });
      ids.alrt = await made('/alerts', {
        name: 'A alert',
        product_id: ids.prod,
        condition: { type: 'price_below', threshold: 10 },
      });
      ids.wh = await made('/webhooks', { url: 'https://a-hooks.example/in' });
      ids.key = (await call(a, 'POST', '/keys', { name: 'A second key' })).json<{ id: string }>().id;
      const rate = await call(a, 'PUT', '/exchange-rates/EUR/USD', { rate: 1.1 });
      assert.equal(rate.statusCode, 201, rate.body);
      const events = (await call(a, 'GET', '/events')).json<{ data: { id: string }[] }>().data;
      assert.ok(events.length > 0, 'A has events');
      ids.evt = events[0]!.id;
      // Kinds A has none of without running checks or firing alerts: well-formed ids under A's parents.
      ids.chk = 'chk_00000000000000000000000000';
      ids.alev = 'alev_00000000000000000000000000';
      ids.esub = 'esub_00000000000000000000000000'; // email is off here (no SMTP_URL): A cannot subscribe

      // What A sees of itself, before and after: every resource and list of A's.
      const readable = [
        '/products',
        '/competitors',
        '/listings',
        '/alerts',
        '/webhooks',
        '/keys',
        '/exchange-rates',
        `/products/${ids.prod}`,
        `/competitors/${ids.comp}`,
        `/listings/${ids.lst}`,
        `/alerts/${ids.alrt}`,
        `/webhooks/${ids.wh}`,
        `/keys/${ids.key}`,
        '/exchange-rates/EUR/USD',
      ];
      const snapshot = async () =>
        Promise.all(
          readable.map(async (u) => `${u} ${(await call(a, 'GET', u)).body.replace(/"last_used_at":"[^"]*"/g, '')}`),
        );
      const before = await snapshot();

      const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<Doc>();
      const walked = new Set<string>();
      const missing: string[] = [];
      const aIds = Object.entries(ids)
        .filter(([k]) => k !== 'chk' && k !== 'alev' && k !== 'esub')
        .map(([, v]) => v);
      for (const [path, item] of Object.entries(doc.paths)) {
        if (!path.startsWith('/api/v1/')) continue;
        for (const [m, op] of Object.entries(item)) {
          if (!['get', 'post', 'put', 'patch', 'delete'].includes(m)) continue;
          if (Array.isArray(op.security) && op.security.length === 0) continue; // public: health, the document
          const c = CASES[op.operationId];
          if (!c) {
            missing.push(`${op.operationId} (${m.toUpperCase()} ${path})`);
            continue;
          }
          walked.add(op.operationId);
          const url = path.slice('/api/v1'.length).replace(/\{([^}]+)\}/g, (_, name: string) =>
            paramValue(
              op.parameters?.find((p) => p.in === 'path' && p.name === name),
              ids,
              op.operationId,
            ),
          );
          const method = m.toUpperCase() as Method;
          const res = await call(
            b,
            method,
            url,
            c.body?.(ids) ?? (method === 'GET' || method === 'DELETE' ? undefined : {}),
          );
          const what = `${op.operationId}: B ${method} ${url} -> ${res.statusCode} ${res.body.slice(0, 200)}`;
          assert.ok(c.status.includes(res.statusCode), what);
          assert.notEqual(res.statusCode, 403, what);
          assert.ok(res.statusCode < 500, what);
          if (res.statusCode === 404) assert.equal(res.json<{ code: string }>().code, 'not_found', what);
          for (const id of aIds) assert.ok(!res.body.includes(id), `${what}: shows A's ${id}`);
        }
      }
      assert.deepEqual(
        missing,
        [],
        `operations without a tenancy case in test/auth/tenancy.test.ts CASES: say what another account gets there`,
      );
      assert.deepEqual(
        Object.keys(CASES).filter((k) => !walked.has(k)),
        [],
        'every case names an operation of the document',
      );
      assert.deepEqual(await snapshot(), before, "nothing of A's changed");
    },
  );
});
