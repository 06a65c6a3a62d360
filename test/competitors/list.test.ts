import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp, type TestApp } from '../helpers/app.js';
import { expectError, fieldsOf, type Headers } from '../products/support.js';
import { createCompetitor, getJson, type Page } from './support.js';
import { Contract, fetchDocument } from '../openapi/support.js';
import type { Competitor } from '../helpers/api-types.js';

async function page(t: TestApp, headers: Headers, query: string, prefix = '/api/v1') {
  return getJson<Page<Competitor>>(t, headers, `${prefix}/competitors${query ? `?${query}` : ''}`);
}

/** Follows next_cursor to the end; every item in order. */
async function walk(t: TestApp, headers: Headers, query: string, limit: number) {
  const items: Competitor[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const q = new URLSearchParams(query);
    q.set('limit', String(limit));
    if (cursor) q.set('cursor', cursor);
    const p = await page(t, headers, q.toString());
    pages++;
    if (p.pagination.has_more) assert.equal(p.data.length, limit);
    items.push(...p.data);
    cursor = p.pagination.next_cursor;
    assert.ok(pages < 100);
  } while (cursor);
  return items;
}

describe('competitors: list', () => {
  const t = useTestApp();

  it('answers the list envelope, newest first, and walks every sort exactly once', async () => {
    const { headers } = await t.newKey();
    assert.deepEqual(await page(t, headers, ''), {
      data: [],
      pagination: { limit: 20, has_more: false, next_cursor: null },
    });
    const made: Competitor[] = [];
    const names = ['beta', 'Alpha', 'alpha', 'Ärger', '🦊', 'beta'];
    for (let i = 0; i < 13; i++) {
      made.push(
        await createCompetitor(t, headers, { name: names[i % names.length], website: `https://www.s${i % 4}.example` }),
      );
    }
    const first = await page(t, headers, 'limit=5');
    assert.equal(first.data[0]!.id, made[12]!.id, 'newest first');
    assert.equal(first.pagination.has_more, true);
    for (const field of ['created_at', 'updated_at', 'name', 'domain'] as const) {
      for (const sort of [field, `-${field}`]) {
        const all = (await page(t, headers, `sort=${sort}&limit=100`)).data;
        assert.equal(all.length, made.length);
        for (let i = 1; i < all.length; i++) {
          const [a, b] = [all[i - 1]!, all[i]!];
          const c = field.endsWith('_at')
            ? Date.parse(a[field]) - Date.parse(b[field])
            : Buffer.compare(Buffer.from(a[field]), Buffer.from(b[field])) || (a.id < b.id ? -1 : 1);
          assert.ok(sort.startsWith('-') ? c >= 0 : c <= 0, `${sort} out of order at ${i}`);
        }
        const walked = await walk(t, headers, `sort=${sort}`, 4);
        assert.deepEqual(
          walked.map((c) => c.id),
          all.map((c) => c.id),
          sort,
        );
      }
    }
  });

  it('filters by domain (read like the derived one), text and creation time', async () => {
    const { headers } = await t.newKey();
    const a = await createCompetitor(t, headers, {
      name: 'Alpha Shop',
      website: 'https://www.alpha.example/de',
      notes: 'ships 50%_off',
    });
    const b = await createCompetitor(t, headers, { name: 'Bücherwurm', website: 'https://xn--bcher-kva.example' });
    const ids = async (q: string) => (await page(t, headers, q)).data.map((c) => c.id);
    for (const d of ['alpha.example', 'ALPHA.example', 'www.alpha.example'])
      assert.deepEqual(await ids(`domain=${encodeURIComponent(d)}`), [a.id], d);
    for (const d of ['bücher.example', 'xn--bcher-kva.example'])
      assert.deepEqual(await ids(`domain=${encodeURIComponent(d)}`), [b.id], d);
    assert.deepEqual(await ids('domain=alpha'), []);
    assert.deepEqual(await ids('q=ALPHA'), [a.id], 'name, any case');
    assert.deepEqual(await ids('q=BCHER-kva'), [b.id], 'website');
    assert.deepEqual(await ids(`q=${encodeURIComponent('50%_')}`), [a.id], 'notes, % and _ literal');
    assert.deepEqual(await ids(`q=${encodeURIComponent('5%')}`), []);
    assert.deepEqual(await ids(`created_after=${encodeURIComponent(b.created_at)}`), [b.id]);
    assert.deepEqual(await ids(`created_before=${encodeURIComponent(b.created_at)}`), [a.id]);
  });

  it('refuses bad parameters with 422 and bad cursors with 400, never 500', async () => {
    const { headers } = await t.newKey();
    await createCompetitor(t, headers);
    await createCompetitor(t, headers);
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['sort=website', 'sort'],
      ['sort=-listing_count', 'sort'],
      ['domain=https%3A%2F%2Fa.example', 'domain'],
      ['domain=a.example%2Fpath', 'domain'],
      ['domain=a.example:8080', 'domain'],
      ['domain=', 'domain'],
      ['domain=a%00b', 'domain'],
      [`domain=${'a'.repeat(254)}`, 'domain'],
      ['q=', 'q'],
      ['q=%00', 'q'],
      [`q=${'x'.repeat(201)}`, 'q'],
      ['created_after=yesterday', 'created_after'],
      ['created_after=2026-02-01T00:00:00Z&created_before=2026-01-01T00:00:00Z', 'created_after'],
      ['colour=red', 'colour'],
      ['product_id=prod_x', 'product_id'],
    ];
    for (const [q, field] of cases) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/competitors?${q}`, headers });
      assert.deepEqual(fieldsOf(expectError(res, 422, 'validation_failed')), [field], q);
    }
    const byName = (await page(t, headers, 'sort=name&limit=1')).pagination.next_cursor!;
    const forge = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const [q, cursor] of [
      ['sort=-name', byName],
      ['', 'garbage'],
      ['', forge(['-created_at', 'not a time', 'comp_x'])],
      ['sort=domain', forge(['domain', null, 'comp_x'])],
      ['sort=name', forge(['name', 'a\u0000', 'comp_x'])],
    ] as const) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/v1/competitors?${q}&cursor=${encodeURIComponent(cursor)}`,
        headers,
      });
      assert.deepEqual(fieldsOf(expectError(res, 400, 'invalid_request')), ['cursor'], `${q} ${cursor}`);
    }
  });

  it('a website on an IPv6 address has the bracketed address as domain, valid against the document and as a filter (found by the fuzzing suite)', async () => {
    const { headers } = await t.newKey();
    const contract = new Contract(await fetchDocument(t.app));
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/competitors',
      headers,
      payload: { name: 'Six', website: 'http://[::1]:9/' },
    });
    assert.equal(created.statusCode, 201, created.body);
    contract.check('POST', '/api/v1/competitors', created);
    assert.equal(created.json<Competitor>().domain, '[::1]');
    await createCompetitor(t, headers);
    const found = await t.app.inject({
      method: 'GET',
      url: `/api/v1/competitors?domain=${encodeURIComponent('[::1]')}`,
      headers,
    });
    contract.check('GET', '/api/v1/competitors', found);
    assert.deepEqual(
      found.json<Page<Competitor>>().data.map((c) => c.id),
      [created.json<Competitor>().id],
    );
    expectError(
      await t.app.inject({ method: 'GET', url: '/api/v1/competitors?domain=a:b', headers }),
      422,
      'validation_failed',
    );
  });
});
