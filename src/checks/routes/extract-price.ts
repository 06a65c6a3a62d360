import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { checkSelector } from '../../extraction/selector.js';
import { performCheck } from '../run-check.js';
import { ExtractRequestSchema, ExtractResultSchema, type ExtractResult } from '../schemas.js';

export const extractPriceRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/extract',
    {
      // A dry run that saves nothing: a read key may try it (src/auth/scopes.ts).
      config: { scope: 'read' },
      schema: {
        operationId: 'extractPrice',
        summary: 'Try price extraction on a page (dry run)',
        description:
          'Fetches the page as a check of a listing with these settings would (same fetcher, robots.txt, address rules) ' +
          'and shows every price candidate found, the one a check would record and why, and the stock state. Saves ' +
          'nothing: use it to set a listing up (pin a `selector`, set `currency_override`). A page that cannot be ' +
          'fetched or holds no price is still a 200, with `status: "failed"` and `error`; a URL that may not be fetched ' +
          'at all (not http(s), or an address in a private, loopback or link-local range) is a 422, and so is a ' +
          '`selector` a listing would refuse (one that does not compile as CSS, or contains `<`).',
        tags: ['Listings'],
        body: ExtractRequestSchema,
        response: {
          200: withHeaders(ExtractResultSchema, 'What a check would see'),
          ...errorResponses(413, 415, 422),
        },
      },
    },
    async (request): Promise<ExtractResult> => {
      const b = request.body;
      // Compiled as a listing's selector is: one a check could not run is a 422, before any fetch.
      const selectorDetails = checkSelector(b.selector);
      if (selectorDetails.length > 0) throw ERRORS.validation(selectorDetails);
      const outcome = await performCheck(app.ctx, {
        url: b.url,
        selector: b.selector ?? null,
        currency_override: b.currency_override ? b.currency_override.toUpperCase() : null,
        respect_robots: b.respect_robots ?? true,
        render_js: b.render_js ?? false,
        visible_fallback: b.visible_fallback ?? true,
        proxy_url: null,
      });
      if (outcome.bug) request.log.error({ err: outcome.bug }, 'extract dry run failed on an internal error');
      const code = outcome.error?.code;
      if (code === 'invalid_url' || code === 'blocked_address') {
        throw ERRORS.validation([{ field: 'url', message: outcome.error!.message }], 'The URL may not be fetched');
      }
      const x = outcome.extraction;
      const f = outcome.fetch;
      return {
        object: 'extraction',
        url: b.url,
        ok: outcome.ok,
        error_code: outcome.error?.code ?? null,
        error: outcome.error?.message ?? null,
        fetch: f && {
          final_url: f.finalUrl,
          status: f.status,
          content_type: f.contentType === null ? null : f.contentType.slice(0, 200),
          bytes: f.bytes,
          ms: Math.round(f.ms),
          redirects: f.redirects,
        },
        price: outcome.price === null ? null : Number(outcome.price),
        currency: outcome.currency,
        in_stock: outcome.inStock,
        source: outcome.source as ExtractResult['source'],
        availability: x?.availability ?? 'unknown',
        chosen: outcome.candidates.find((c) => c.chosen) ?? null,
        candidates: outcome.candidates,
        failure: x?.failure === undefined ? null : x.failure.slice(0, 2000),
        notes: (x?.notes ?? []).slice(0, 100).map((n) => (n.length > 2000 ? `${n.slice(0, 1999)}…` : n)),
      };
    },
  );
};
