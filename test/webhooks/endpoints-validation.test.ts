import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError } from '../products/support.js';
import { endpointUrlProblem } from '../../src/webhooks/service.js';
import { tableLookup } from '../fetcher/helpers/fetcher.js';
import { call, type Page } from './api-support.js';
import type { WebhookMaybeSecret } from '../helpers/api-types.js';

/**
 * Bad endpoint bodies, the SSRF guard (loopback NOT allowed here, as in production) and other
 * accounts' endpoints: clear 422s and 404s, never a 500, never a partial write.
 */

const t = useTestApp();

const count = async (accountId: string) =>
  Number(
    (
      await t.rt.db.query<{ n: number | string }>('select count(*) as n from webhook_endpoints where account_id = $1', [
        accountId,
      ])
    ).rows[0]!.n,
  );

describe('webhook endpoints: refused URLs', () => {
  const refused: [string, unknown, RegExp][] = [
    ['a private address', 'http://10.0.0.1/hook', /private/],
    ['a home network address', 'https://192.168.1.20/hook', /private/],
    ['another private range', 'http://172.16.5.4:8080/hook', /private/],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/', /metadata/],
    ['IPv6 loopback when loopback is not allowed', 'http://[::1]:8080/hook', /loopback/],
    ['IPv4 loopback when loopback is not allowed', 'http://127.0.0.1:8080/hook', /loopback/],
    ['loopback written as a number', 'http://2130706433/hook', /loopback/],
    ['localhost by name', 'http://localhost:8080/hook', /loopback/],
    ['localhost with a trailing dot', 'http://localhost./hook', /loopback/],
    ['a name under localhost', 'http://Hooks.LOCALHOST.:8080/hook', /loopback/],
    ['an empty host (the parser would read "hook" as the host)', 'http:///hook', /host/],
    ['an empty host with a port', 'http://:8080/hook', /./],
    ['a host name with an empty label', 'http://hooks..example.com/hook', /host/],
    ['IPv4-mapped private IPv6', 'http://[::ffff:10.0.0.1]/hook', /private/],
    ['link-local IPv6', 'http://[fe80::1]/hook', /link-local/],
    ['the unspecified address', 'http://0.0.0.0/hook', /unspecified/],
    ['a file URL', 'file:///etc/passwd', /http/],
    ['an FTP URL', 'ftp://example.com/hook', /http/],
    ['javascript', 'javascript:alert(1)', /http/],
    ['credentials in the URL', 'https://user:pass@example.com/hook', /user name or password/],
    ['a very long URL', `https://example.com/${'a'.repeat(2100)}`, /2048/],
    ['not a URL', 'not a url', /./],
    ['an empty string', '', /./],
    ['a number', 42, /string/],
    ['null', null, /string/],
  ];
  for (const [what, url, message] of refused) {
    it(`refuses ${what} with a 422 naming url, on create and on update`, async () => {
      const { headers, accountId } = await t.newKey();
      const e = expectError(await call(t, headers, 'POST', '/webhooks', { url }), 422, 'validation_failed');
      const detail = e.details?.find((d) => d.field === 'url');
      assert.ok(detail, JSON.stringify(e));
      assert.match(detail.message, message);
      // A name's refusal says what rule it breaks, not what it resolved to.
      if (what === 'localhost by name') assert.doesNotMatch(detail.message, /127\.0\.0\.1|::1/);
      assert.equal(await count(accountId), 0);

      const ok = await call(t, headers, 'POST', '/webhooks', { url: 'https://hooks.example.com/in' });
      assert.equal(ok.statusCode, 201, ok.body);
      const id = ok.json<WebhookMaybeSecret>().id;
      const u = expectError(
        await call(t, headers, 'PATCH', `/webhooks/${id}`, { url, description: 'changed' }),
        422,
        'validation_failed',
      );
      assert.ok(u.details?.some((d) => d.field === 'url'));
      const after = (await call(t, headers, 'GET', `/webhooks/${id}`)).json<WebhookMaybeSecret>();
      assert.equal(after.url, 'https://hooks.example.com/in');
      assert.equal(after.description, null);
    });
  }

  it('accepts a public host name, even one that does not resolve yet (the guard runs again before each delivery)', async () => {
    const { headers } = await t.newKey();
    for (const url of [
      'https://example.com/hooks/pricehound',
      'http://no-such-host.invalid/hook',
      'HTTPS://Hooks.Example.com:8443/a?b=c',
    ]) {
      const res = await call(t, headers, 'POST', '/webhooks', { url });
      assert.equal(res.statusCode, 201, `${url}: ${res.body}`);
    }
  });
});

describe('webhook endpoints: odd URL forms are judged without asking DNS', () => {
  it('refuses a trailing dot, a localhost name and an empty host before any lookup', async () => {
    const lookup = tableLookup({});
    for (const url of [
      'http://localhost./hook',
      'http://api.localhost/hook',
      'http:///hook',
      'https:////hook',
      'http://a..b/hook',
    ]) {
      assert.ok(await endpointUrlProblem(url, { allowLoopback: false }, lookup), url);
    }
    assert.deepEqual([...lookup.calls.keys()], []);
    // A trailing dot names the same host as its plain form: one lookup, of the plain name.
    const table = tableLookup({ 'internal.test': ['10.0.0.1'], 'hooks.example.com': ['93.184.215.14'] });
    assert.match(
      (await endpointUrlProblem('http://internal.test./hook', { allowLoopback: false }, table)) ?? '',
      /^internal\.test resolves to a private network address/,
    );
    assert.equal(await endpointUrlProblem('https://hooks.example.com./in', { allowLoopback: false }, table), undefined);
    assert.deepEqual([...table.calls.keys()].sort(), ['hooks.example.com', 'internal.test']);
  });
});

describe('webhook endpoints: bad bodies', () => {
  const bad: [string, unknown, string][] = [
    ['no url', {}, 'url'],
    ['an unknown event type', { event_types: ['price.changed', 'price.exploded'] }, 'event_types'],
    ['event types not an array', { event_types: 'price.changed' }, 'event_types'],
    ['an event type not a string', { event_types: [1] }, 'event_types'],
    ['an unknown format', { format: 'teams' }, 'format'],
    ['enabled as text', { enabled: 'yes' }, 'enabled'],
    ['a description too long', { description: 'x'.repeat(501) }, 'description'],
    ['a NUL in the description', { description: 'a\u0000b' }, 'description'],
    ['an unknown field', { secret: 'whsec_mine' }, 'secret'],
    ['a huge number as enabled', { enabled: 1e308 }, 'enabled'],
  ];
  for (const [what, extra, field] of bad) {
    it(`refuses ${what} with a 422 naming ${field}`, async () => {
      const { headers, accountId } = await t.newKey();
      const body = what === 'no url' ? extra : { url: 'https://example.com/hook', ...(extra as object) };
      const e = expectError(await call(t, headers, 'POST', '/webhooks', body), 422, 'validation_failed');
      assert.ok(
        e.details?.some(
          (d) =>
            d.field === field ||
            d.field.startsWith(`${field}[`) ||
            d.field.startsWith(`${field}.`) ||
            d.field.startsWith(`${field}/`),
        ),
        JSON.stringify(e.details),
      );
      assert.equal(await count(accountId), 0);
    });
  }

  it('answers malformed JSON 400 and another content type 415', async () => {
    const { headers } = await t.newKey();
    expectError(
      await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers, payload: '{"url": ' }),
      400,
      'invalid_json',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: { ...headers, 'content-type': 'text/plain' },
        payload: 'url=x',
      }),
      415,
      'unsupported_media_type',
    );
  });

  it('keeps SQL and HTML in a description as text', async () => {
    const { headers } = await t.newKey();
    const description = `'); drop table webhook_endpoints; -- <script>alert(1)</script>`;
    const res = await call(t, headers, 'POST', '/webhooks', { url: 'https://example.com/hook', description });
    assert.equal(res.statusCode, 201, res.body);
    const got = await call(t, headers, 'GET', `/webhooks/${res.json<WebhookMaybeSecret>().id}`);
    assert.equal(got.json<WebhookMaybeSecret>().description, description);
  });
});

describe("webhook endpoints: another account's are 404 everywhere", () => {
  it('never shows, changes, tests or redelivers them', async () => {
    const owner = await t.newKey();
    const other = await t.newKey();
    const res = await call(t, owner.headers, 'POST', '/webhooks', {
      url: 'https://example.com/hook',
      description: 'mine',
    });
    const w = res.json<WebhookMaybeSecret>();
    const requests: [Parameters<typeof call>[2], string, unknown][] = [
      ['GET', `/webhooks/${w.id}`, undefined],
      ['PUT', `/webhooks/${w.id}`, { description: 'theirs' }],
      ['PATCH', `/webhooks/${w.id}`, { enabled: false }],
      ['PATCH', `/webhooks/${w.id}`, { url: 'https://example.org/theirs' }],
      ['POST', `/webhooks/${w.id}/rotate-secret`, {}],
      ['POST', `/webhooks/${w.id}/rotate-secret`, { expire_previous_in_seconds: 999_999 }],
      ['POST', `/webhooks/${w.id}/test`, {}],
      ['GET', `/webhooks/${w.id}/deliveries`, undefined],
      ['POST', `/webhooks/${w.id}/redeliver`, { since: '2026-01-01T00:00:00Z', until: '2026-01-02T00:00:00Z' }],
      ['DELETE', `/webhooks/${w.id}`, undefined],
      ['GET', '/webhooks/wh_0000000000000000000000000', undefined],
      ['GET', '/webhooks/not-an-id', undefined],
    ];
    for (const [method, url, body] of requests) {
      const r = await call(t, other.headers, method, url, body);
      assert.equal(r.statusCode, 404, `${method} ${url}: ${r.body}`);
      assert.equal(r.json<{ code: string }>().code, 'not_found');
    }
    const list = await call(t, other.headers, 'GET', '/webhooks');
    assert.deepEqual(list.json<Page<WebhookMaybeSecret>>().data, []);
    const mine = await call(t, owner.headers, 'GET', `/webhooks/${w.id}`);
    const { secret: _s, ...shown } = w;
    assert.deepEqual(mine.json(), shown, 'unchanged');
    const events = await call(t, owner.headers, 'GET', '/events?type=webhook.test');
    assert.deepEqual(events.json<Page<unknown>>().data, []);
  });
});
