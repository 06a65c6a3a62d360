/**
 * /dashboard: the built files served from memory (src/dashboard), their content types, caching
 * and security headers, JSON 404s for anything else, and no way out of the build folder. Needs
 * the build (npm install runs it; else npm run build).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import Fastify from 'fastify';
import { dashboardRoutes } from '../../src/dashboard/index.js';
import { DASHBOARD_DIST } from '../../src/dashboard/files.js';
import { CONTENT_SECURITY_POLICY } from '../../src/dashboard/headers.js';
import { errorHandler } from '../../src/http/error-handler.js';
import { useTestApp } from '../helpers/app.js';
import { expectError } from '../products/support.js';

const built = fs.existsSync(path.join(DASHBOARD_DIST, 'index.html'));
const assets = built ? fs.readdirSync(path.join(DASHBOARD_DIST, 'assets')) : [];
const js = assets.find((f) => f.endsWith('.js'));
const css = assets.find((f) => f.endsWith('.css'));

const SECURITY = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

function assertSecurityHeaders(headers: Record<string, unknown>, what: string) {
  for (const [name, value] of Object.entries(SECURITY)) assert.equal(headers[name], value, `${what}: ${name}`);
}

describe(
  "the dashboard's files at /dashboard",
  { skip: built ? false : `the dashboard is not built (${DASHBOARD_DIST}): npm run build` },
  () => {
    const t = useTestApp();

    it('answers /dashboard and /dashboard/ with index.html: HTML, revalidated, with the security headers', async () => {
      for (const url of ['/dashboard', '/dashboard/', '/dashboard/index.html']) {
        const res = await t.app.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 200, url);
        assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
        assert.equal(res.headers['cache-control'], 'no-cache');
        assertSecurityHeaders(res.headers, url);
        assert.match(res.body, /<div id="app"><\/div>/);
        // Every script is a file of the build: none inline (the CSP would refuse it anyway).
        const scripts = [...res.body.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
        assert.ok(scripts.length > 0);
        for (const s of scripts) assert.match(s, /src="\/dashboard\/assets\/[^"]+\.js"/);
        assert.doesNotMatch(res.body, /https?:\/\//, 'nothing loaded from another host');
      }
      assert.match(CONTENT_SECURITY_POLICY, /script-src 'self'(;|$)/);
      assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval/);
      assert.match(CONTENT_SECURITY_POLICY, /frame-ancestors 'none'/);
      const head = await t.app.inject({ method: 'HEAD', url: '/dashboard/' });
      assert.equal(head.statusCode, 200);
      assert.equal(head.body, '');
    });

    it('serves the hashed assets with their types for good, and the others revalidated', async () => {
      assert.ok(js && css, `assets: ${assets.join(', ')}`);
      const cases: [string, string, string][] = [
        [`/dashboard/assets/${js}`, 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable'],
        [`/dashboard/assets/${css}`, 'text/css; charset=utf-8', 'public, max-age=31536000, immutable'],
        ['/dashboard/favicon.svg', 'image/svg+xml', 'no-cache'],
      ];
      for (const [url, type, cache] of cases) {
        const res = await t.app.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 200, url);
        assert.equal(res.headers['content-type'], type, url);
        assert.equal(res.headers['cache-control'], cache, url);
        assertSecurityHeaders(res.headers, url);
        assert.equal(
          res.rawPayload.length,
          fs.statSync(path.join(DASHBOARD_DIST, url.slice('/dashboard/'.length))).size,
        );
      }
    });

    it('sends br or gzip when asked, identical once decoded, and revalidates with ETag', async () => {
      const url = `/dashboard/assets/${js}`;
      const original = fs.readFileSync(path.join(DASHBOARD_DIST, 'assets', js!));
      const br = await t.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, deflate, br' } });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(br.headers.vary, 'Accept-Encoding');
      assert.ok(zlib.brotliDecompressSync(br.rawPayload).equals(original));
      assert.ok(br.rawPayload.length < original.length / 2);
      const gz = await t.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, br;q=0' } });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.ok(zlib.gunzipSync(gz.rawPayload).equals(original));
      const plain = await t.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'identity' } });
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.ok(plain.rawPayload.equals(original));

      const first = await t.app.inject({ method: 'GET', url: '/dashboard/' });
      const etag = String(first.headers.etag);
      assert.ok(etag);
      const again = await t.app.inject({ method: 'GET', url: '/dashboard/', headers: { 'if-none-match': etag } });
      assert.equal(again.statusCode, 304);
      assert.equal(again.body, '');
    });

    it("answers anything else with the API's JSON 404, and nothing outside the build is reachable", async () => {
      const secrets = [fs.readFileSync('package.json', 'utf8').slice(0, 40), 'root:x:0:0'];
      // Paths within /dashboard that name no file of the build: the dashboard's 404, with its headers.
      for (const url of [
        '/dashboard/assets/missing-abc123.js',
        '/dashboard/products',
        '/dashboard/.vite/manifest.json',
        `/dashboard/ASSETS/${js}`,
      ]) {
        const res = await t.app.inject({ method: 'GET', url });
        expectError(res, 404, 'not_found');
        assertSecurityHeaders(res.headers, url);
      }
      // Ways out of the folder: each a 404 (or a 400 for a URL that is not correctly encoded), never a file.
      for (const url of [
        '/dashboard/../package.json',
        '/dashboard/%2e%2e/package.json',
        '/dashboard/..%2fpackage.json',
        '/dashboard/assets/..%2findex.html',
        '/dashboard/assets/%2e%2e/%2e%2e/package.json',
        '/dashboard/..%5c..%5cpackage.json',
        '/dashboard//etc/passwd',
        '/dashboard/%2fetc%2fpasswd',
        '/dashboard/index.html%00.js',
        '/dashboard/%',
      ]) {
        const res = await t.app.inject({ method: 'GET', url });
        if (res.statusCode === 400) expectError(res, 400, 'invalid_request');
        else expectError(res, 404, 'not_found');
        for (const s of secrets) assert.ok(!res.body.includes(s), `${url} leaked ${s}`);
      }
    });

    it("takes GET and HEAD only, and leaves the API's own responses as they were", async () => {
      const post = await t.app.inject({ method: 'POST', url: '/dashboard/', payload: {} });
      expectError(post, 405, 'method_not_allowed');
      assert.equal(post.headers.allow, 'GET, HEAD');
      const { headers } = await t.newKey();
      for (const url of ['/api/v1/products', '/healthz', '/api/v1/nope']) {
        const res = await t.app.inject({ method: 'GET', url, headers });
        assert.equal(res.headers['content-security-policy'], undefined, url);
        assert.equal(res.headers['x-frame-options'], undefined, url);
      }
    });
  },
);

describe('the dashboard plugin on its own', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-dash-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const appOn = async (d: string) => {
    const app = Fastify();
    app.setErrorHandler(errorHandler);
    await app.register(dashboardRoutes, { dir: d });
    return app;
  };

  it('without a build answers 404 saying how to build it', async () => {
    const app = await appOn(path.join(dir, 'nothing-here'));
    const res = await app.inject({ method: 'GET', url: '/dashboard/' });
    const body = expectError(res, 404, 'not_found');
    assert.match(body.error, /npm run build/);
    await app.close();
  });

  it('serves regular files only: a symbolic link in the build that points outside it is not served', async () => {
    const build = path.join(dir, 'build');
    fs.mkdirSync(path.join(build, 'assets'), { recursive: true });
    fs.writeFileSync(path.join(build, 'index.html'), '<!doctype html><title>t</title>');
    fs.writeFileSync(path.join(build, 'assets', 'a-1.weird'), 'bytes');
    fs.writeFileSync(path.join(dir, 'secret.txt'), 'top secret');
    fs.symlinkSync(path.join(dir, 'secret.txt'), path.join(build, 'assets', 'link.txt'));
    const app = await appOn(build);
    expectError(await app.inject({ method: 'GET', url: '/dashboard/assets/link.txt' }), 404, 'not_found');
    const weird = await app.inject({ method: 'GET', url: '/dashboard/assets/a-1.weird' });
    assert.equal(weird.statusCode, 200);
    assert.equal(weird.headers['content-type'], 'application/octet-stream');
    assert.equal(weird.headers['x-content-type-options'], 'nosniff');
    await app.close();
  });
});
