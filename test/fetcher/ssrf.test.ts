/**
 * The HTTP fetcher refuses private, loopback, link-local and metadata targets, and proves it
 * sent nothing to them: every client socket this process creates and every connection undici
 * is about to make are observed (diagnostics channels), and refused fetches create none.
 * Names are resolved from tables (no DNS traffic); the only real server is the fixture site on
 * 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, afterEach, describe, test } from 'node:test';
import { AddressGuard, systemLookup, type LookupAll } from '../../src/fetcher/address-guard.js';
import { createHttpFetcher, type HttpFetcher } from '../../src/fetcher/http.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.js';
import { fetchError, observeConnections, tableLookup, testConfig, type ConnectionLog } from './helpers/fetcher.js';

let site: FixtureSite;
let conns: ConnectionLog;
before(async () => {
  site = await startFixtureSite();
});
after(() => site.close());
beforeEach(() => {
  conns = observeConnections();
});
afterEach(() => conns.stop());

const lookup = tableLookup({
  'internal.test': ['10.0.0.1'],
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['93.184.215.14', '192.168.1.20'],
  'v6private.test': ['fd00::5'],
  'mapped.test': ['::ffff:10.0.0.1'],
  'loop.test': ['127.0.0.1'],
});

// localhost goes to the system resolver (getaddrinfo reads /etc/hosts: no DNS traffic).
const withLocalhost: LookupAll = (host) => (host === 'localhost' ? systemLookup(host) : lookup(host));

describe('refused targets without ALLOW_LOOPBACK_TARGETS: nothing is sent', () => {
  let fetcher: HttpFetcher;
  const requested: string[] = [];
  before(() => {
    fetcher = createHttpFetcher(testConfig({ allowLoopbackTargets: false }), {
      lookup: withLocalhost,
      onRequest: (e) => requested.push(e.url),
    });
  });
  after(() => fetcher.close());

  const targets: Array<[string, RegExp]> = [
    ['http://10.0.0.1/', /^10\.0\.0\.1 is a private network address/],
    ['http://169.254.169.254/latest/meta-data/', /^169\.254\.169\.254 is a cloud metadata address/],
    ['http://[fd00:ec2::254]/latest/meta-data/', /^fd00:ec2::254 is a cloud metadata address/],
    ['http://100.100.100.200/latest/meta-data/', /cloud metadata/],
    ['http://[::1]/', /^::1 is a loopback address/],
    ['http://127.0.0.1/', /^127\.0\.0\.1 is a loopback address/],
    ['http://0x7f000001/', /^127\.0\.0\.1 is a loopback address/],
    ['http://2130706433/', /^127\.0\.0\.1 is a loopback address/],
    ['http://0177.0.0.1/', /^127\.0\.0\.1 is a loopback address/],
    ['http://[::ffff:7f00:1]/', /^::ffff:7f00:1 is a reserved or special-purpose address \(it carries 127\.0\.0\.1\)/],
    ['http://0.0.0.0/', /unspecified address/],
    ['http://localhost/', /^localhost resolves to a loopback address;/],
    ['http://internal.test/p/1', /^internal\.test resolves to a private network address;/],
    ['http://metadata.test/', /^metadata\.test resolves to a cloud metadata address;/],
    ['http://mixed.test/', /^mixed\.test resolves to a private network address;/],
    ['http://v6private.test/', /unique-local/],
    ['http://mapped.test/', /^mapped\.test resolves to a private network address;/],
    ['http://loop.test/', /^loop\.test resolves to a loopback address;/],
  ];
  for (const [url, message] of targets) {
    for (const respectRobots of [true, false]) {
      test(`${url} (respectRobots ${respectRobots})`, async () => {
        const err = await fetchError(fetcher.fetch({ url, respectRobots }));
        assert.equal(err.code, 'blocked_address');
        assert.match(err.message, message);
        // A refusal names the rule broken, never the address a name resolved to.
        if (!/^http:\/\/[\d[]/.test(url)) assert.doesNotMatch(err.message, /\d+\.\d+\.\d+\.\d+|::/);
        assert.deepEqual(conns.sockets, [], 'a socket was created');
        assert.deepEqual(conns.undiciHosts, [], 'undici started a connection');
        assert.deepEqual(requested, []);
      });
    }
  }

  test('the fixture site itself is refused (it is on 127.0.0.1)', async () => {
    const err = await fetchError(fetcher.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: true }));
    assert.equal(err.code, 'blocked_address');
    assert.equal(site.requests.length, 0);
    assert.deepEqual(conns.sockets, []);
  });
});

describe('with ALLOW_LOOPBACK_TARGETS: loopback only', () => {
  let fetcher: HttpFetcher;
  before(() => {
    fetcher = createHttpFetcher(testConfig({ allowLoopbackTargets: true }), { lookup });
  });
  after(() => fetcher.close());

  test('the fixture site on 127.0.0.1 is fetched', async () => {
    const page = await fetcher.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: false });
    assert.equal(page.status, 200);
    assert.deepEqual([...new Set(conns.connectedTo)], ['127.0.0.1']);
  });

  for (const url of [
    'http://10.0.0.1/',
    'http://169.254.169.254/',
    'http://internal.test/',
    'http://[fd00::1]/',
    'http://192.168.0.1/',
  ]) {
    test(`${url} stays refused`, async () => {
      const err = await fetchError(fetcher.fetch({ url, respectRobots: false }));
      assert.equal(err.code, 'blocked_address');
      assert.deepEqual(conns.sockets, []);
    });
  }

  test('a redirect from the fixture site to 10.0.0.1 is refused before connecting', async () => {
    site.clearLog();
    const err = await fetchError(fetcher.fetch({ url: `${site.url}/redirect/private`, respectRobots: false }));
    assert.equal(err.code, 'blocked_address');
    assert.equal(
      err.message,
      'the page redirects to http://10.0.0.1/, but 10.0.0.1 is a private network address; pricehound does not fetch private, loopback, link-local or cloud metadata addresses',
    );
    assert.equal(site.hits('/redirect/private'), 1);
    assert.ok(!conns.undiciHosts.includes('10.0.0.1'));
    assert.ok(
      conns.connectedTo.every((a) => a === '127.0.0.1'),
      conns.connectedTo.join(),
    );
  });

  test('a redirect to the metadata service is refused, with robots.txt honoured too', async () => {
    const err = await fetchError(fetcher.fetch({ url: `${site.url}/redirect/metadata`, respectRobots: true }));
    assert.equal(err.code, 'blocked_address');
    assert.match(
      err.message,
      /^the page redirects to http:\/\/169\.254\.169\.254\/latest\/meta-data\/, but 169\.254\.169\.254 is a cloud metadata address/,
    );
    assert.ok(!conns.undiciHosts.includes('169.254.169.254'));
    assert.ok(conns.connectedTo.every((a) => a === '127.0.0.1'));
  });

  test('a redirect to a name resolving privately is refused', async () => {
    const target = encodeURIComponent('http://internal.test/admin');
    const err = await fetchError(
      fetcher.fetch({ url: `${site.url}/redirect/to?location=${target}`, respectRobots: false }),
    );
    assert.equal(err.code, 'blocked_address');
    assert.equal(
      err.message,
      'the page redirects to http://internal.test/admin, but internal.test resolves to a private network address; pricehound does not fetch private, loopback, link-local or cloud metadata addresses',
    );
    assert.ok(!conns.undiciHosts.includes('internal.test'));
  });
});

describe("the demo's allowance: one loopback address:port, not all of loopback", () => {
  let fetcher: HttpFetcher;
  before(() => {
    fetcher = createHttpFetcher(testConfig({ allowLoopbackTargets: false, allowTargets: [`127.0.0.1:${site.port}`] }), {
      lookup,
    });
  });
  after(() => fetcher.close());

  test('the allowed address and port is fetched, robots.txt included', async () => {
    const page = await fetcher.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: true });
    assert.equal(page.status, 200);
    assert.deepEqual([...new Set(conns.connectedTo)], ['127.0.0.1']);
  });

  for (const url of [
    `http://127.0.0.1:${1}/`,
    'http://127.0.0.1/',
    'http://[::1]/',
    'http://127.0.0.2/',
    'http://loop.test/',
    'http://10.0.0.1/',
  ]) {
    test(`${url} stays refused`, async () => {
      const err = await fetchError(fetcher.fetch({ url, respectRobots: false }));
      assert.equal(err.code, 'blocked_address');
      assert.deepEqual(conns.sockets, []);
    });
  }

  test('another port of the allowed address, or a name resolving to it, stays refused', async () => {
    for (const url of [
      `http://127.0.0.1:${site.port + 1}/`,
      `http://loop.test:${site.port}/pages/jsonld-basic.html`,
      `http://localhost:${site.port}/`,
    ]) {
      assert.equal((await fetchError(fetcher.fetch({ url, respectRobots: false }))).code, 'blocked_address', url);
    }
    assert.deepEqual(conns.sockets, []);
  });

  test('a redirect from the allowed shop to another local port is refused before connecting', async () => {
    site.clearLog();
    const target = encodeURIComponent(`http://127.0.0.1:${site.port + 1}/admin`);
    const err = await fetchError(
      fetcher.fetch({ url: `${site.url}/redirect/to?location=${target}`, respectRobots: false }),
    );
    assert.equal(err.code, 'blocked_address');
    assert.equal(site.hits('/redirect/to'), 1);
    assert.match(
      err.message,
      /^the page redirects to http:\/\/127\.0\.0\.1:\d+\/admin, but 127\.0\.0\.1 is a loopback address/,
    );
  });
});

describe('DNS rebinding: the socket connects to the address that was checked', () => {
  test('a name that re-resolves to a private address after the check is still connected to the checked one', async () => {
    let calls = 0;
    const rebinding = tableLookup({ 'rebind.test': () => (++calls === 1 ? ['127.0.0.1'] : ['10.0.0.1']) });
    const guard = new AddressGuard({ allowLoopback: true, lookup: rebinding });
    const fetcher = createHttpFetcher(testConfig(), { guard });
    try {
      const page = await fetcher.fetch({
        url: `http://rebind.test:${site.port}/pages/jsonld-basic.html`,
        respectRobots: false,
      });
      assert.equal(page.status, 200);
      assert.equal(rebinding.calls.get('rebind.test'), 1, 'connect re-used the approved resolution');
      assert.deepEqual(conns.connectedTo, ['127.0.0.1']);
    } finally {
      await fetcher.close();
    }
  });

  test('when the approved resolution has expired, the connect step re-checks and refuses', async () => {
    let calls = 0;
    const rebinding = tableLookup({ 'rebind.test': () => (++calls === 1 ? ['127.0.0.1'] : ['10.0.0.1']) });
    const guard = new AddressGuard({ allowLoopback: true, lookup: rebinding, cacheTtlMs: 0 });
    const fetcher = createHttpFetcher(testConfig(), { guard });
    try {
      const err = await fetchError(
        fetcher.fetch({ url: `http://rebind.test:${site.port}/pages/jsonld-basic.html`, respectRobots: false }),
      );
      assert.equal(err.code, 'blocked_address');
      assert.match(err.message, /rebind\.test resolves to a private network address/);
      assert.equal(rebinding.calls.get('rebind.test'), 2, 'pre-flight check, then the connect step');
      assert.deepEqual(conns.undiciHosts, ['rebind.test'], 'undici asked to connect...');
      assert.deepEqual(conns.sockets, [], '...but the guard refused before any socket existed');
    } finally {
      await fetcher.close();
    }
  });
});

describe('URLs that are not fetched at all', () => {
  let fetcher: HttpFetcher;
  before(() => {
    fetcher = createHttpFetcher(testConfig(), { lookup });
  });
  after(() => fetcher.close());

  for (const [url, message] of [
    ['ftp://127.0.0.1/price', /only http and https addresses can be fetched, not ftp/],
    ['file:///etc/passwd', /not file/],
    ['gopher://127.0.0.1:6379/_INFO', /not gopher/],
    ['not a url', /is not a valid URL/],
    ['http://user:secret@127.0.0.1/', /user name or password/],
  ] as const) {
    test(url, async () => {
      const err = await fetchError(fetcher.fetch({ url, respectRobots: false }));
      assert.equal(err.code, 'invalid_url');
      assert.match(err.message, message);
      assert.deepEqual(conns.sockets, []);
    });
  }

  test('a redirect to another scheme is refused', async () => {
    const err = await fetchError(fetcher.fetch({ url: `${site.url}/redirect/ftp`, respectRobots: false }));
    assert.equal(err.code, 'invalid_url');
    assert.equal(
      err.message,
      'the page redirects to ftp://127.0.0.1/price.html; only http and https addresses are fetched',
    );
  });

  test('a name that does not resolve fails with dns_failed, without traffic', async () => {
    const err = await fetchError(fetcher.fetch({ url: 'http://nowhere.test/', respectRobots: true }));
    assert.equal(err.code, 'dns_failed');
    assert.equal(err.message, 'nowhere.test does not resolve (no such host)');
    assert.deepEqual(conns.sockets, []);
  });
});
