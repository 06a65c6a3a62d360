import crypto from 'node:crypto';
import os from 'node:os';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { CheckAbortedError, runCheck } from '../run-check.js';
import { CheckResultSchema, ListingIdSchema, toCheckResult } from '../schemas.js';
import { lockListingForCheck, unlockListing } from '../leases.js';

/** This process, in the lock holder of a check run by the API (`api:host:pid:random`). */
const HOLDER = `api:${os.hostname()}:${process.pid}`;

/**
 * How long a check run now may hold its listing: enough for the page fetch (robots.txt first,
 * then the page, each up to FETCH_TIMEOUT_MS), at least a minute. The check is aborted a few
 * seconds before, so the lease never expires under a check still running.
 */
export const manualLeaseSeconds = (fetchTimeoutMs: number) => Math.max(60, Math.ceil((3 * fetchTimeoutMs) / 1000));

export const checkListingRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/listings/:id/check',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'checkListing',
        summary: 'Check a listing now',
        description:
          'Fetches the listing\'s page and reads its price now, outside the schedule, and returns the check, recorded like ' +
          'a scheduled one: on success a price observation, and the listing\'s state and next check (one interval from ' +
          'now; after a failure, the backoff) updated. A failed check is still a 200 with `status: "failed"` and ' +
          '`error`. 409 while a worker (or another request) is checking the listing. Works on disabled listings too. ' +
          'Send an `Idempotency-Key` to make retries replay the first result instead of checking again.',
        tags: ['Listings'],
        params: Type.Object({ id: ListingIdSchema }, { additionalProperties: false }),
        response: {
          200: withHeaders(CheckResultSchema, 'The check, as recorded'),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const { db, fetcher, extractor, config } = app.ctx;
      const lockedBy = `${HOLDER}:${crypto.randomBytes(6).toString('hex')}`;
      const lease = manualLeaseSeconds(config.fetchTimeoutMs);
      const target = await lockListingForCheck(db, request.principal.accountId, request.params.id, lockedBy, lease);
      if (target === null) throw ERRORS.notFound('Listing');
      if (target === 'locked') throw ERRORS.conflict('The listing is being checked right now; try again in a moment');
      try {
        const { outcome, row } = await runCheck({ db, fetcher, extractor }, target, lockedBy, AbortSignal.timeout((lease - 5) * 1000));
        if (outcome.bug) request.log.error({ err: outcome.bug, listing_id: target.id }, 'check failed on an internal error');
        if (!row) {
          // Deleted, or its url, selector or currency changed while we checked: nothing recorded.
          await unlockListing(db, target.id, lockedBy);
          throw ERRORS.conflict('The listing was changed or deleted during the check; nothing was recorded');
        }
        return toCheckResult(row);
      } catch (err) {
        await unlockListing(db, target.id, lockedBy).catch(() => undefined);
        if (err instanceof CheckAbortedError) throw ERRORS.unavailable('The check took too long and was abandoned; retry shortly');
        throw err;
      }
    },
  );
};
