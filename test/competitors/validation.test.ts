import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError, fieldsOf, type Headers } from '../products/support.js';
import { createCompetitor, rowsOf } from './support.js';

const valid = { name: 'Rival', website: 'https://rival.example' };

describe('competitors: bad input', () => {
  const t = useTestApp();
  const post = (headers: Headers, payload: unknown) =>
    t.app.inject({ method: 'POST', url: '/api/v1/competitors', headers, payload: payload as string });

  it('refuses malformed JSON with 400 and bodies that are not objects with 422', async () => {
    const { headers, accountId } = await t.newKey();
    for (const text of [
      '{"name":',
      '{name: "x"}',
      "{'name':'x'}",
      '{"name":"x",}',
      '{"__proto__":{"x":1},"name":"a","website":"https://a.example"}',
    ]) {
      expectError(await post(headers, text), 400, 'invalid_json');
    }
    for (const text of ['[]', '"text"', '42', 'null', 'true', ''])
      expectError(await post(headers, text), 422, 'validation_failed');
    expectError(await post({ ...headers, 'content-type': 'text/plain' }, 'name=x'), 415, 'unsupported_media_type');
    assert.equal((await rowsOf(t, 'competitors', accountId)).length, 0);
  });

  it('names every bad field and each missing one', async () => {
    const { headers, accountId } = await t.newKey();
    const bad = await post(headers, {
      name: '  ',
      website: 'ftp://rival.example',
      notes: 5,
      proxy_url: 'socks5://proxy.example:1080',
    });
    assert.deepEqual(fieldsOf(expectError(bad, 422, 'validation_failed')), ['name', 'notes', 'proxy_url', 'website']);
    const missing = expectError(await post(headers, {}), 422, 'validation_failed');
    assert.deepEqual(fieldsOf(missing), ['name', 'website']);
    for (const d of missing.details!) assert.match(d.message, /required/);
    assert.equal((await rowsOf(t, 'competitors', accountId)).length, 0);
  });

  it('refuses unknown and read-only fields by name, on create and update', async () => {
    const { headers, accountId } = await t.newKey();
    const res = await post(headers, {
      ...valid,
      domain: 'other.example',
      listing_count: 3,
      id: 'comp_x',
      colour: 'red',
    });
    assert.deepEqual(fieldsOf(expectError(res, 422, 'validation_failed')), ['colour', 'domain', 'id', 'listing_count']);
    const c = await createCompetitor(t, headers);
    const before = await rowsOf(t, 'competitors', accountId);
    const upd = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/competitors/${c.id}`,
      headers,
      payload: { domain: 'x.example', name: 'changed' },
    });
    assert.deepEqual(fieldsOf(expectError(upd, 422, 'validation_failed')), ['domain']);
    assert.deepEqual(await rowsOf(t, 'competitors', accountId), before, 'nothing changed, not even the valid name');
  });

  it('accepts only absolute http(s) websites that name a host', async () => {
    const { headers } = await t.newKey();
    for (const website of [
      'ftp://a.example',
      'javascript:alert(1)',
      '//a.example',
      '/relative',
      'rival.example',
      '',
      'https://exa mple.com',
      'mailto:a@b.c',
      'http:\\\\evil',
      'https://',
      5,
      null,
      ['https://a.example'],
    ]) {
      const body = expectError(await post(headers, { ...valid, website }), 422, 'validation_failed');
      assert.deepEqual(fieldsOf(body), ['website'], JSON.stringify(website));
    }
  });

  it('accepts a proxy only as an http(s) address without path, query or fragment', async () => {
    const { headers } = await t.newKey();
    for (const proxy_url of ['http://proxy.example:3128', 'https://u:p@proxy.example', 'http://proxy2.example:8080/']) {
      const c = await createCompetitor(t, headers, { proxy_url });
      assert.ok(c.proxy_url?.startsWith('http'), proxy_url);
    }
    for (const proxy_url of [
      'socks5://proxy.example:1080',
      'http://proxy.example/path',
      'http://proxy.example/?x=1',
      'http://proxy.example#f',
      'proxy.example:3128',
      'http://',
      7,
    ]) {
      const body = expectError(await post(headers, { ...valid, proxy_url }), 422, 'validation_failed');
      assert.deepEqual(fieldsOf(body), ['proxy_url'], String(proxy_url));
      assert.doesNotMatch(JSON.stringify(body), /u:p@/);
    }
  });

  it('refuses NUL characters in every text field and in field names, with 422', async () => {
    const { headers, accountId } = await t.newKey();
    for (const [field, value] of [
      ['name', 'a\u0000b'],
      ['notes', '\u0000'],
      ['website', 'https://a.example/\u0000'],
      ['proxy_url', 'http://p\u0000.example'],
    ] as const) {
      assert.deepEqual(
        fieldsOf(expectError(await post(headers, { ...valid, [field]: value }), 422, 'validation_failed')),
        [field],
      );
    }
    expectError(await post(headers, { ...valid, 'na\u0000me': 'x' }), 422, 'validation_failed');
    const c = await createCompetitor(t, headers);
    expectError(
      await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/competitors/${c.id}`,
        headers,
        payload: { notes: 'x\u0000' },
      }),
      422,
      'validation_failed',
    );
    assert.equal((await rowsOf(t, 'competitors', accountId)).length, 1);
  });

  it('enforces maximum lengths and accepts the maximum itself', async () => {
    const { headers } = await t.newKey();
    for (const [field, max] of [
      ['name', 200],
      ['notes', 10_000],
    ] as const) {
      assert.equal((await post(headers, { ...valid, [field]: 'a'.repeat(max) })).statusCode, 201);
      const body = expectError(
        await post(headers, { ...valid, [field]: 'b'.repeat(max + 1) }),
        422,
        'validation_failed',
      );
      assert.deepEqual(fieldsOf(body), [field]);
    }
    const long = `https://a.example/${'p'.repeat(2048)}`;
    assert.deepEqual(
      fieldsOf(expectError(await post(headers, { ...valid, website: long }), 422, 'validation_failed')),
      ['website'],
    );
    const huge = await post(headers, { ...valid, notes: 'x'.repeat(1_100_000) });
    expectError(huge, 413, 'payload_too_large');
  });

  it('stores SQL and HTML verbatim', async () => {
    const { headers } = await t.newKey();
    const nasty = { name: "Robert'); DROP TABLE competitors;--", notes: '<script>alert(1)</script> %_\\ ${x}' };
    const c = await createCompetitor(t, headers, nasty);
    assert.equal(c.name, nasty.name);
    assert.equal(c.notes, nasty.notes);
    const list = await t.app.inject({
      method: 'GET',
      url: `/api/v1/competitors?q=${encodeURIComponent('%_\\')}`,
      headers,
    });
    assert.deepEqual(
      list.json<{ data: { id: string }[] }>().data.map((x) => x.id),
      [c.id],
    );
  });
});
