import type { Database, Queryable } from '../db/types.js';
import { ERRORS, type ErrorDetail } from '../http/errors.js';
import { recordEvent } from '../events/service.js';
import { newId } from '../ids.js';
import type { Competitor, CompetitorCreate, CompetitorUpdate } from './schemas.js';
import {
  type CompetitorChanges,
  competitorsOfDomains,
  type CompetitorRow,
  deleteCompetitor,
  insertCompetitor,
  insertCompetitors,
  lockCompetitorDomains,
  lockCompetitors,
  lockCompetitorProxy,
  toCompetitor,
  updateCompetitor,
} from './sql.js';
import { domainOf, maskProxyUrl, parentDomains, proxyUrlProblem } from './urls.js';

/** What the schema cannot say about a website and a proxy URL, as 422 details. */
function urlProblems(body: { website?: string; proxy_url?: string | null }, keepsStoredProxy = false): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (body.website !== undefined && domainOf(body.website) === undefined) {
    details.push({ field: 'website', message: 'must name a host' });
  }
  if (typeof body.proxy_url === 'string' && !keepsStoredProxy) {
    const problem = proxyUrlProblem(body.proxy_url);
    if (problem) details.push({ field: 'proxy_url', message: problem });
  }
  return details;
}

/** Each change commits with its event (docs/EVENTS.md): `competitor.created`, `.updated`, `.deleted`. */
export async function createCompetitor(
  db: Database,
  accountId: string,
  body: CompetitorCreate,
): Promise<CompetitorRow> {
  const details = urlProblems(body);
  if (details.length > 0) throw ERRORS.validation(details);
  return db.transaction(async (tx) => {
    const row = await insertCompetitor(tx, accountId, {
      id: newId('comp'),
      name: body.name,
      website: body.website,
      domain: domainOf(body.website)!,
      notes: body.notes ?? null,
      proxy_url: body.proxy_url ?? null,
    });
    await recordEvent(tx, accountId, 'competitor.created', toCompetitor(row));
    return row;
  });
}

/** Its listings and prices go with it; the event tells of the competitor only. */
export async function removeCompetitor(db: Database, accountId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await deleteCompetitor(tx, accountId, id);
    if (!row) throw ERRORS.notFound('Competitor');
    await recordEvent(tx, accountId, 'competitor.deleted', toCompetitor(row));
  });
}

/**
 * Only the fields sent change. A `proxy_url` equal to the masked form responses show keeps the
 * stored URL, so a client that sends a competitor back as it read it does not overwrite the
 * proxy's credentials with `****`.
 */
export async function changeCompetitor(
  db: Database,
  accountId: string,
  id: string,
  body: CompetitorUpdate,
): Promise<CompetitorRow> {
  // Only a proxy URL with credentials can be the masked one; then the stored one is read (and
  // locked, so a concurrent change cannot slip between the comparison and the update).
  if (typeof body.proxy_url === 'string' && body.proxy_url.includes('@')) {
    return db.transaction(async (tx) => {
      const current = await lockCompetitorProxy(tx, accountId, id);
      if (!current) throw ERRORS.notFound('Competitor');
      const keep =
        current.proxy_url !== null &&
        body.proxy_url === maskProxyUrl(current.proxy_url) &&
        body.proxy_url !== current.proxy_url;
      return applyChanges(tx, accountId, id, body, keep);
    });
  }
  return db.transaction((tx) => applyChanges(tx, accountId, id, body, false));
}

async function applyChanges(
  db: Queryable,
  accountId: string,
  id: string,
  body: CompetitorUpdate,
  keepProxy: boolean,
): Promise<CompetitorRow> {
  const details = urlProblems(body, keepProxy);
  if (details.length > 0) throw ERRORS.validation(details);
  const changes: CompetitorChanges = {
    name: body.name,
    notes: body.notes,
    proxy_url: keepProxy ? undefined : body.proxy_url,
  };
  if (body.website !== undefined) {
    changes.website = body.website;
    changes.domain = domainOf(body.website)!;
  }
  const row = await updateCompetitor(db, accountId, id, changes);
  if (!row) throw ERRORS.notFound('Competitor');
  if (Object.values(changes).some((v) => v !== undefined))
    await recordEvent(db, accountId, 'competitor.updated', toCompetitor(row));
  return row;
}

/** A site a listing's URL names: its domain (`domainOf`) and the address of its home page. */
export interface Site {
  domain: string;
  website: string;
}

/**
 * The id of the account's competitor of each site, by domain, created (named after its domain,
 * its website the URL's home page) when the account has none; `created` are the new ones as the
 * API shows them, for the caller's `competitor.created` events (recorded in its transaction, with
 * its own events, in order). A site's competitor is the one whose domain is the site's, else the one
 * of the nearest parent domain (`shop.example.com` is `example.com`'s), the oldest when several
 * share it. Concurrent callers deriving the same domain wait for each other
 * (lockCompetitorDomains), so a domain gets one competitor however many batches name it at once.
 * Every competitor returned is locked against deletion until commit.
 */
export async function competitorsOfSites(
  tx: Queryable,
  accountId: string,
  sites: readonly Site[],
): Promise<{ byDomain: Map<string, string>; created: Competitor[] }> {
  const websites = new Map<string, string>();
  for (const s of sites) if (!websites.has(s.domain)) websites.set(s.domain, s.website);
  const domains = [...websites.keys()];
  await lockCompetitorDomains(tx, accountId, domains);
  const candidates = new Set(domains.flatMap((d) => [d, ...parentDomains(d)]));
  const existing = new Map<string, CompetitorRow>();
  // Oldest first: the first of a domain is kept.
  for (const c of await competitorsOfDomains(tx, accountId, [...candidates]))
    if (!existing.has(c.domain)) existing.set(c.domain, c);
  const byDomain = new Map<string, string>();
  const missing: string[] = [];
  for (const d of domains) {
    const found = [d, ...parentDomains(d)].map((x) => existing.get(x)).find((c) => c !== undefined);
    if (found) byDomain.set(d, found.id);
    else missing.push(d);
  }
  const created = await insertCompetitors(
    tx,
    accountId,
    missing.map((d) => ({
      id: newId('comp'),
      name: d,
      website: websites.get(d)!,
      domain: d,
      notes: null,
      proxy_url: null,
    })),
  );
  for (const c of created) byDomain.set(c.domain, c.id);
  return { byDomain, created: created.map(toCompetitor) };
}

/** Which of `ids` are the account's competitors, locked against deletion until commit. */
export async function lockAccountCompetitors(
  tx: Queryable,
  accountId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  return new Set((await lockCompetitors(tx, accountId, ids)).map((c) => c.id));
}

export { domainOf, withinDomain } from './urls.js';
