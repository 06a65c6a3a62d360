/**
 * Fetching through a competitor's HTTP proxy: CONNECT tunnels through a loopback test proxy,
 * proxy credentials, and the address rules applied to both the proxy and the target.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { createHttpFetcher, type HttpFetcher } from '../../src/fetcher/http.js';
import { startFixtureProxy, type FixtureProxy } from '../fixtures/site/proxy.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.js';
import {
  TEST_UA,
  fetchError,
  observeConnections,
  tableLookup,
  testConfig,
  type ConnectionLog,
} from './helpers/fetcher.js';

let site: FixtureSite;
let proxy: FixtureProxy;
let fetcher: HttpFetcher;
before(async () => {
  site = await startFixtureSite();
  proxy = await startFixtureProxy();
});
after(async () => {
  await proxy.close();
  await site.close();
});
beforeEach(() => {
  fetcher = createHttpFetcher(testConfig(), {
    lookup: tableLookup({ 'internal.test': ['10.0.0.1'], 'proxy.internal.test': ['192.168.10.10'] }),
  });
  site.clearLog();
});
afterEach(() => fetcher.close());

describe('through a proxy', () => {
  test('the page and its robots.txt go through a CONNECT tunnel to the site', async () => {
    const before = proxy.requests.length;
    const page = await fetcher.fetch({
      url: site.pageUrl('jsonld-basic.html'),
      respectRobots: true,
      proxyUrl: proxy.url,
    });
    assert.equal(page.status, 200);
    const mine = proxy.requests.slice(before);
    assert.ok(mine.length >= 1);
    assert.ok(
      mine.every((r) => r.method === 'CONNECT' && r.target === `127.0.0.1:${site.port}` && r.outcome === 'tunnelled'),
    );
    assert.deepEqual(
      site.requests.map((r) => r.path),
      ['/robots.txt', '/pages/jsonld-basic.html'],
    );
    assert.ok(site.requests.every((r) => r.userAgent === TEST_UA));
  });

  test('robots.txt is honoured through the proxy', async () => {
    const err = await fetchError(
      fetcher.fetch({ url: `${site.url}/private/jsonld-basic.html`, respectRobots: true, proxyUrl: proxy.url }),
    );
    assert.equal(err.code, 'robots_disallowed');
  });

  test('credentials in the proxy URL are sent as Proxy-Authorization', async () => {
    const authed = await startFixtureProxy({ auth: 'shop user:s3cr3t' });
    try {
      const page = await fetcher.fetch({
        url: site.pageUrl('og-sale-price.html'),
        respectRobots: false,
        proxyUrl: authed.url,
      });
      assert.equal(page.status, 200);
      assert.equal(
        authed.requests[0]?.proxyAuthorization,
        `Basic ${Buffer.from('shop user:s3cr3t').toString('base64')}`,
      );
      assert.equal(authed.requests[0]?.outcome, 'tunnelled');
    } finally {
      await authed.close();
    }
  });

  test('wrong credentials: the proxy refuses and the check says so', async () => {
    const authed = await startFixtureProxy({ auth: 'u:right' });
    try {
      const err = await fetchError(
        fetcher.fetch({
          url: site.pageUrl('og-sale-price.html'),
          respectRobots: false,
          proxyUrl: `http://u:wrong@127.0.0.1:${authed.port}`,
        }),
      );
      assert.equal(err.code, 'network');
      assert.equal(
        err.message,
        `the proxy refused to connect to 127.0.0.1:${site.port} (407 Proxy Authentication Required)`,
      );
      assert.equal(site.requests.length, 0);
    } finally {
      await authed.close();
    }
  });

  test('a proxy that is down', async () => {
    const port = await freePort();
    const err = await fetchError(
      fetcher.fetch({
        url: site.pageUrl('og-sale-price.html'),
        respectRobots: false,
        proxyUrl: `http://127.0.0.1:${port}`,
      }),
    );
    assert.equal(err.code, 'network');
    assert.equal(err.message, 'the proxy refused the connection (ECONNREFUSED)');
  });

  test('proxy URLs must be http or https', async () => {
    for (const proxyUrl of ['socks5://127.0.0.1:1080', 'not a url']) {
      const err = await fetchError(
        fetcher.fetch({ url: site.pageUrl('og-sale-price.html'), respectRobots: false, proxyUrl }),
      );
      assert.equal(err.code, 'invalid_url', proxyUrl);
    }
  });
});

describe('address rules with a proxy', () => {
  let conns: ConnectionLog;
  beforeEach(() => {
    conns = observeConnections();
  });
  afterEach(() => conns.stop());

  test('a private target is refused before the proxy is contacted', async () => {
    const before = proxy.requests.length;
    for (const url of ['http://10.0.0.1/', 'http://internal.test/', 'http://169.254.169.254/latest/meta-data/']) {
      const err = await fetchError(fetcher.fetch({ url, respectRobots: true, proxyUrl: proxy.url }));
      assert.equal(err.code, 'blocked_address', url);
    }
    assert.equal(proxy.requests.length, before);
    assert.deepEqual(conns.sockets, []);
  });

  test('a redirect through the proxy to a private address is refused before the next CONNECT', async () => {
    const before = proxy.requests.length;
    const err = await fetchError(
      fetcher.fetch({ url: `${site.url}/redirect/private`, respectRobots: false, proxyUrl: proxy.url }),
    );
    assert.equal(err.code, 'blocked_address');
    assert.ok(proxy.requests.slice(before).every((r) => r.target === `127.0.0.1:${site.port}`));
  });

  test('a proxy at a private address is refused (proxy URLs are user input too)', async () => {
    for (const proxyUrl of ['http://10.0.0.5:3128', 'http://proxy.internal.test:8080', 'http://169.254.169.254:80']) {
      const err = await fetchError(
        fetcher.fetch({ url: site.pageUrl('og-sale-price.html'), respectRobots: true, proxyUrl }),
      );
      assert.equal(err.code, 'blocked_address', proxyUrl);
      assert.match(err.message, /^proxy [^ ]+: /);
    }
    assert.deepEqual(conns.sockets, []);
    assert.equal(site.requests.length, 0);
  });

  test('without ALLOW_LOOPBACK_TARGETS a loopback proxy is refused like any loopback address', async () => {
    const strict = createHttpFetcher(testConfig({ allowLoopbackTargets: false }));
    try {
      const before = proxy.requests.length;
      const err = await fetchError(
        strict.fetch({ url: 'http://93.184.215.14/', respectRobots: false, proxyUrl: proxy.url }),
      );
      assert.equal(err.code, 'blocked_address');
      assert.match(err.message, /^proxy 127\.0\.0\.1:\d+: 127\.0\.0\.1 is a loopback address/);
      assert.equal(proxy.requests.length, before);
      assert.deepEqual(conns.sockets, []);
    } finally {
      await strict.close();
    }
  });
});

/** A port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const srv = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}
