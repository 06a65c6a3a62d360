import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { fetchDocument } from './support.js';

/** /docs: swagger-ui, served entirely by us (a self-hosted deployment may have no internet). */
describe('openapi: the interactive docs page', () => {
  const t = useTestApp();

  for (const page of ['/docs', '/docs/']) {
    it(`${page} answers HTML whose scripts and styles are all served here`, async () => {
      const res = await t.app.inject({ method: 'GET', url: page });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /<div id="swagger-ui">/);
      const refs = [...res.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
      assert.ok(refs.length >= 4, `assets: ${refs.join(', ')}`);
      for (const ref of refs) {
        assert.ok(!/^[a-z]+:|^\/\//i.test(ref), `${ref} is not on this server`);
        const url = new URL(ref, `http://localhost${page}`).pathname;
        const asset = await t.app.inject({ method: 'GET', url });
        assert.equal(asset.statusCode, 200, url);
        if (url.endsWith('.js')) assert.match(String(asset.headers['content-type']), /javascript/, url);
        if (url.endsWith('.css')) {
          assert.match(String(asset.headers['content-type']), /text\/css/, url);
          // Only the SVG namespace, which is an identifier, not something fetched.
          const external = [...asset.body.matchAll(/url\(\s*["']?(https?:[^"')]+)/g)]
            .map((m) => m[1])
            .filter((u) => !u!.startsWith('http://www.w3.org/2000/svg'));
          assert.deepEqual(external, [], `${url} loads nothing from elsewhere`);
        }
      }
    });
  }

  it('loads our canonical document, with the validator badge (a third-party call) off', async () => {
    const init = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    assert.equal(init.statusCode, 200);
    assert.match(init.body, /"urls":\[\{"url":"\/api\/v1\/openapi\.json"/);
    assert.match(init.body, /"validatorUrl":null/);
    // swagger-ui's own copy is the same document.
    const own = await t.app.inject({ method: 'GET', url: '/docs/json' });
    assert.deepEqual(own.json(), await fetchDocument(t.app));
  });

  it('sends a Content-Security-Policy that allows only this server and works over plain http', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/' });
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /https:|validator\.swagger\.io|upgrade-insecure-requests|unsafe-inline|unsafe-eval/);
  });

  it('is not part of the API: no key needed, and the API routes still need one', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/docs' })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/products' })).statusCode, 401);
  });
});
