import {
  csvRow,
  type ImportedListing,
  importListings,
  LISTING_CSV_COLUMNS,
  LISTING_CSV_REQUIRED,
  LISTING_IMPORT_ERROR_COLUMNS,
  listingImportErrorRows,
  readListingsCsv,
} from '@pricehound/client';
import { ApiError, ph } from '../api';
import { type Child, extLink, h, put } from '../dom';
import { count, money, relative, stock, when } from '../format';
import { competitorMap, competitorName, productById, productsByIds } from '../names';
import { type PageContext, pageHeader } from '../page';
import { go, href } from '../router';
import type {
  Candidate,
  CheckResult,
  Competitor,
  Extraction,
  ExtractRequest,
  Listing,
  ListingCreate,
  Query,
} from '../types';
import {
  badge,
  checkbox,
  clearErrors,
  control,
  describeError,
  errorBox,
  field,
  loading,
  listPager,
  modal,
  section,
  selectField,
  showFieldErrors,
  table,
  toast,
  withBusy,
} from '../ui';

type Status = NonNullable<Query<'/api/v1/listings'>['status']>;
const STATUSES: [Status | '', string][] = [
  ['', 'Any state'],
  ['ok', 'OK'],
  ['failing', 'Failing'],
  ['flagged', 'Flagged (failing repeatedly)'],
  ['pending', 'Never checked'],
];

const isStatus = (v: string | undefined): v is Status => STATUSES.some(([s]) => s !== '' && s === v);

export const statusBadge = (l: Pick<Listing, 'status' | 'held'>): Child => [
  badge(l.status, l.status === 'ok' ? 'ok' : l.status === 'pending' ? 'muted' : 'bad'),
  l.held ? [' ', badge('price held', 'warn')] : null,
];

const HELD_WORDS: Record<NonNullable<CheckResult['held']>['state'], string> = {
  pending:
    'waiting: the next check reads the page again within 5 minutes and records the price if it reads the same; or accept or reject it now',
  accepted: 'accepted by hand: recorded with the time it was read',
  rejected: 'rejected by hand: nothing was recorded',
  confirmed: 'confirmed: the next check read the same price and recorded it',
  superseded: 'replaced: a later check recorded or held another price',
};

/**
 * Accept and Reject for the listing's held reading `checkId` (POST .../accept, .../reject): what
 * happened is said in `result`, then `done` runs (the page reloads what it shows).
 */
export function heldActions(
  listingId: string,
  checkId: string,
  result: HTMLElement,
  done: () => Promise<void> | void,
): HTMLElement {
  const accept = h('button', { type: 'button', class: 'small' }, 'Accept');
  const reject = h('button', { type: 'button', class: 'secondary small' }, 'Reject');
  const answer = (what: 'accept' | 'reject', button: HTMLButtonElement) =>
    void withBusy(button, result, async () => {
      const path = { path: { id: listingId, check_id: checkId } };
      const c =
        what === 'accept'
          ? await ph.POST('/api/v1/listings/{id}/checks/{check_id}/accept', { params: path })
          : await ph.POST('/api/v1/listings/{id}/checks/{check_id}/reject', { params: path });
      accept.disabled = true;
      reject.disabled = true;
      put(
        result,
        h(
          'p',
          { class: 'notice ok', 'data-testid': 'held-answer' },
          what === 'accept'
            ? `Accepted: ${money(c.price, c.currency)} is recorded as the price read ${when(c.started_at, true)}.`
            : `Rejected ${money(c.price, c.currency)}: nothing was recorded. The same price read again stays held until someone accepts it.`,
        ),
      );
      await done();
    });
  accept.addEventListener('click', () => answer('accept', accept));
  reject.addEventListener('click', () => answer('reject', reject));
  return h('div', { class: 'row-actions' }, accept, reject);
}

/**
 * The button that pins `path` as the listing's `selector` (PATCH /listings/{id}) and says, in
 * `result`, which selector the listing holds now.
 */
function pinButton(
  listingId: string,
  path: string,
  result: HTMLElement,
  label = 'Pin as the price selector',
): HTMLButtonElement {
  const pin = h('button', { type: 'button', class: 'small' }, label);
  pin.addEventListener(
    'click',
    () =>
      void withBusy(pin, result, async () => {
        const l = await ph.PATCH('/api/v1/listings/{id}', {
          params: { path: { id: listingId } },
          body: { selector: path },
        });
        put(
          result,
          h(
            'p',
            { class: 'notice ok' },
            'Pinned: the listing now reads its price from ',
            h('code', { 'data-testid': 'pinned-selector' }, l.selector ?? '—'),
            ' first; its structured data and the visible page decide only when that element shows no price.',
          ),
        );
      }),
  );
  return pin;
}

/** The finder's refusal lists the prices it could not choose between: each can be pinned. */
const REFUSED = 'the visible-price finder refused to choose';

/**
 * Every price a page offered, in order of preference, with the one chosen and why the others were
 * not. With a listing, a check that chose nothing offers to pin each price the visible-price
 * finder could not choose between (its `detail` is the element's CSS path).
 */
export function candidatesTable(candidates: readonly Candidate[], listingId: string | null = null): HTMLElement {
  const result = h('div', { 'aria-live': 'polite', 'data-testid': 'pin-result' });
  const pinnable = listingId !== null && !candidates.some((c) => c.chosen);
  const where = (c: Candidate): Child => {
    const code = h('code', null, c.detail ?? '—');
    if (!pinnable || !listingId || c.source !== 'visible' || c.ignored !== REFUSED || c.detail.endsWith('…'))
      return code;
    return [code, ' ', pinButton(listingId, c.detail, result, `Pin ${money(c.price, c.currency)}`)];
  };
  return h(
    'div',
    { class: 'candidates' },
    h(
      'p',
      { class: 'hint' },
      'Candidates are tried in order of preference (a pinned selector, then JSON-LD, microdata, RDFa, meta tags, shop-platform data); the first one not ignored is chosen.',
    ),
    table(
      `Price candidates (${candidates.length})`,
      [
        {
          title: '',
          cell: (c: Candidate) =>
            c.chosen ? badge('chosen', 'ok') : c.ignored ? badge('ignored', 'muted') : badge('eligible', 'muted'),
        },
        {
          title: 'Price',
          class: 'num',
          cell: (c) =>
            money(c.price, c.currency) +
            (c.from ? ' (from)' : '') +
            (c.range ? ` (range ${c.range.low}–${c.range.high})` : ''),
        },
        { title: 'Source', cell: (c) => c.source },
        { title: 'Where on the page', cell: where },
        { title: 'Raw text', cell: (c) => h('code', null, c.raw ?? '—') },
        { title: 'Stock', cell: (c) => c.availability ?? '—' },
        {
          title: 'Why (not)',
          cell: (c) => (c.chosen ? 'first candidate not ignored' : (c.ignored ?? 'a candidate before it was chosen')),
        },
      ],
      candidates,
      'The page offered no price at all.',
    ),
    pinnable ? result : null,
  );
}

/**
 * Where on the page a price shows (its element's CSS path, text and surroundings), with one button
 * that pins that path as the listing's `selector` (PATCH /listings/{id}) and says what the listing
 * holds now. Without a listing (the dry run) the path is shown to copy. Null: no evidence stored.
 */
export function evidenceView(listingId: string | null, c: Candidate | undefined): HTMLElement | null {
  const ev = c?.evidence;
  if (!c || !ev) return null;
  const result = h('div', { 'aria-live': 'polite', 'data-testid': 'pin-result' });
  // A clipped path (over 1000 characters, ending in "…") would pin a selector that matches nothing.
  const clipped = ev.path.endsWith('…');
  let action: Child = null;
  if (c.source === 'selector') action = h('span', { class: 'muted' }, "(read through the listing's pinned selector)");
  else if (listingId && !clipped) action = pinButton(listingId, ev.path, result);
  return h(
    'div',
    { class: 'evidence-element', 'data-testid': 'evidence-element' },
    h('p', null, 'Element: ', h('code', { 'data-testid': 'evidence-path' }, ev.path), ' ', action),
    h('p', null, 'Its text: ', h('code', null, ev.text)),
    ev.snippet ? h('p', null, 'Around it: ', h('q', { 'data-testid': 'evidence-snippet' }, ev.snippet)) : null,
    result,
  );
}

/** What a held check says: why it was held, what became of it, and Accept/Reject while it waits. */
function heldView(c: CheckResult, done: () => Promise<void> | void): HTMLElement | null {
  const held = c.held;
  if (!held) return null;
  const result = h('div', { 'aria-live': 'polite' });
  return h(
    'div',
    { class: 'notice warn held', 'data-testid': 'held-check' },
    h(
      'p',
      null,
      c.outcome === 'recorded'
        ? `Held first (${held.confirmed_by ?? ''}), then read again and recorded. `
        : 'Held, not recorded: ',
      held.reason,
    ),
    c.outcome === 'held' ? h('p', null, h('strong', null, 'Now: '), HELD_WORDS[held.state]) : null,
    c.outcome === 'held' && held.state === 'pending' ? heldActions(c.listing_id, c.id, result, done) : null,
    result,
  );
}

function checkView(c: CheckResult, done: () => Promise<void> | void = () => undefined): HTMLElement {
  const read =
    c.outcome !== 'failed' ? ` · ${money(c.price, c.currency)}, ${stock(c.in_stock)} (${c.source ?? ''})` : '';
  return h(
    'div',
    { class: 'check' },
    h(
      'p',
      null,
      c.outcome === 'recorded'
        ? badge('ok', 'ok')
        : c.outcome === 'held'
          ? badge('held', 'warn')
          : badge(c.error_code ?? 'failed', 'bad'),
      ' ',
      when(c.started_at, true),
      ` · ${c.duration_ms} ms`,
      c.http_status !== null ? ` · HTTP ${c.http_status}` : '',
      read,
    ),
    heldView(c, done),
    c.error ? h('p', { class: 'notice error' }, c.error) : null,
    c.final_url ? h('p', null, 'Page: ', extLink(c.final_url)) : null,
    evidenceView(
      c.listing_id,
      c.candidates.find((x) => x.chosen),
    ),
    candidatesTable(c.candidates, c.listing_id),
  );
}

export async function listingsPage(ctx: PageContext): Promise<void> {
  const q = ctx.query;
  const filters: Record<string, string> = {};
  for (const k of ['status', 'product_id', 'competitor_id']) {
    const v = q.get(k);
    if (v) filters[k] = v;
  }
  const cursor = q.get('cursor');
  const query = {
    status: isStatus(filters.status) ? filters.status : undefined,
    product_id: filters.product_id,
    competitor_id: filters.competitor_id,
  };
  pageHeader(ctx, 'Competitors & listings');

  const comps = await competitorMap(true).catch(() => new Map<string, Competitor>());
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Filter listings' },
    selectField({ name: 'status', label: 'State', options: STATUSES, value: filters.status }),
    selectField({
      name: 'competitor_id',
      label: 'Competitor',
      options: [['', 'Any'], ...[...comps.values()].map((c) => [c.id, c.name] as const)],
      value: filters.competitor_id,
    }),
    filters.product_id ? h('input', { type: 'hidden', name: 'product_id', value: filters.product_id }) : null,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit' }, 'Apply'),
      h('a', { class: 'button secondary', href: '#/listings' }, 'Clear'),
    ),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const next: Record<string, string> = {};
    for (const k of ['status', 'competitor_id', 'product_id']) {
      const v = control(form, k)?.value ?? (form.elements.namedItem(k) as HTMLInputElement | null)?.value;
      if (v) next[k] = v;
    }
    go('/listings', next);
  });
  const heldSlot = h('div', { 'data-testid': 'held-readings' });
  // Outside heldSlot, which the reload after an answer redraws: what was done stays said.
  const answerSlot = h('div', { 'aria-live': 'polite', 'data-testid': 'held-answer-slot' });
  const listSlot = h('div', null, loading('Loading listings…'));
  const resultSlot = h('div', { class: 'check-result', 'aria-live': 'polite', 'data-testid': 'check-result' });
  ctx.main.append(section('Listings', form, heldSlot, answerSlot, listSlot, resultSlot));

  const reload = async () => {
    try {
      const [page, held] = await Promise.all([
        ph.GET('/api/v1/listings', {
          params: { query: { ...query, cursor: cursor ?? undefined, limit: 25, sort: 'next_check_at' } },
          signal: ctx.signal,
        }),
        ph.GET('/api/v1/listings', {
          params: { query: { ...query, held: true, limit: 100, sort: '-updated_at' } },
          signal: ctx.signal,
        }),
      ]);
      const prods = await productsByIds([...page.data, ...held.data].map((l) => l.product_id));
      put(heldSlot, heldReadings(held.data, prods, comps, answerSlot, reload));
      put(
        listSlot,
        table(
          'Listings, next check first',
          [
            {
              title: 'Product',
              cell: (l: Listing) =>
                h('a', { href: href(`/products/${l.product_id}`) }, prods.get(l.product_id)?.name ?? l.product_id),
            },
            { title: 'Where', cell: (l) => competitorName(comps, l.competitor_id) },
            { title: 'Page', cell: (l) => extLink(l.url, shortUrl(l.url)) },
            {
              title: 'State',
              cell: (l) => [
                statusBadge(l),
                l.consecutive_failures > 1 ? ` ${l.consecutive_failures} failures in a row` : '',
              ],
            },
            {
              title: 'Last price',
              class: 'num',
              cell: (l) => [
                money(l.last_price, l.last_currency),
                l.last_price !== null ? h('br') : null,
                l.last_price !== null ? stock(l.in_stock) : '',
              ],
            },
            { title: 'Last error', cell: (l) => l.last_error ?? '—' },
            { title: 'Last check', cell: (l) => relative(l.last_checked_at) },
            { title: 'Next check', cell: (l) => (l.enabled ? relative(l.next_check_at) : 'disabled') },
            {
              title: 'Actions',
              cell: (l) => {
                const now = h('button', { type: 'button', class: 'small' }, 'Check now');
                now.addEventListener(
                  'click',
                  () =>
                    void withBusy(now, resultSlot, async () => {
                      put(resultSlot, loading(`Checking ${shortUrl(l.url)}…`));
                      const r = await ph.POST('/api/v1/listings/{id}/check', { params: { path: { id: l.id } } });
                      put(resultSlot, h('h3', { tabindex: -1 }, `Check of ${shortUrl(l.url)}`), checkView(r, reload));
                      resultSlot.querySelector('h3')?.focus();
                      await reload();
                    }),
                );
                const log = h('button', { type: 'button', class: 'secondary small' }, 'Check log');
                log.addEventListener(
                  'click',
                  () =>
                    void withBusy(log, resultSlot, async () => {
                      const checks = await ph.GET('/api/v1/listings/{id}/checks', {
                        params: { path: { id: l.id }, query: { limit: 20 } },
                      });
                      put(
                        resultSlot,
                        h('h3', { tabindex: -1 }, `Last checks of ${shortUrl(l.url)}`),
                        checks.data.length === 0
                          ? h('p', { class: 'muted' }, 'Not checked yet.')
                          : checks.data.map((c) =>
                              h(
                                'details',
                                null,
                                h('summary', null, `${when(c.started_at, true)}: ${checkSummary(c)}`),
                                checkView(c, reload),
                              ),
                            ),
                      );
                      resultSlot.querySelector('h3')?.focus();
                    }),
                );
                return h('div', { class: 'row-actions' }, now, log);
              },
            },
          ],
          page.data,
          'No listings match.',
        ),
        listPager('/listings', filters, cursor, page.pagination),
      );
    } catch (err) {
      if (!ctx.signal.aborted) put(listSlot, errorBox(err));
    }
  };
  await reload();

  const product = filters.product_id ? await productById(filters.product_id).catch(() => null) : null;
  // After an import: the competitors it made get their names, the list its new rows.
  const afterImport = async () => {
    for (const [id, c] of await competitorMap(true).catch(() => new Map<string, Competitor>())) comps.set(id, c);
    await reload();
  };
  const importButton = h(
    'button',
    { type: 'button', class: 'secondary', onclick: () => openListingImport(() => void afterImport()) },
    'Import listings (CSV)',
  );
  ctx.main.append(
    section(
      'Add a listing',
      h(
        'p',
        { class: 'toolbar' },
        importButton,
        ' Many pages at once: a CSV of SKU, page address and (optionally) competitor.',
      ),
      addListingForm(comps, product ? { id: product.id, name: product.name } : undefined, () => void reload()),
    ),
    section('Competitors', competitorsView(comps)),
    section('Try extraction (dry run)', extractForm()),
  );
}

/** One line of the check log: the price recorded, the price held, or why the check failed. */
function checkSummary(c: CheckResult): string {
  if (c.outcome === 'recorded') return money(c.price, c.currency);
  if (c.outcome === 'held') return `held ${money(c.price, c.currency)} (${c.held?.state ?? ''})`;
  return c.error_code ?? 'failed';
}

/**
 * The listings with a held reading waiting, each with the price read, the last price recorded,
 * why it was held, and Accept / Reject. Nothing when none waits.
 */
function heldReadings(
  listings: readonly Listing[],
  prods: Map<string, { name: string }>,
  comps: Map<string, Competitor>,
  answerSlot: HTMLElement,
  reload: () => Promise<void>,
): Child {
  if (listings.length === 0) return null;
  return h(
    'div',
    { class: 'held-readings' },
    h('h3', null, `Held readings (${listings.length})`),
    h(
      'p',
      { class: 'hint' },
      "Prices a check read but did not record because they cannot be right next to the listing's last price (far from it, or in another currency). " +
        "An enabled listing's next check reads the page again within 5 minutes and records the price if it reads the same. Accept records it now, with the time it was read; Reject drops it.",
    ),
    h(
      'ul',
      { class: 'held-list' },
      listings.map((l) => {
        const held = l.held!;
        const name = prods.get(l.product_id)?.name ?? l.product_id;
        return h(
          'li',
          { class: 'held-item', 'aria-label': `Held reading of ${name} at ${competitorName(comps, l.competitor_id)}` },
          h(
            'p',
            { class: 'held-head' },
            h('a', { href: href(`/products/${l.product_id}`) }, name),
            ` at ${competitorName(comps, l.competitor_id)} · `,
            extLink(l.url, shortUrl(l.url)),
          ),
          h(
            'p',
            { class: 'held-prices' },
            h('strong', { 'data-testid': 'held-price' }, money(held.price, held.currency)),
            ` read ${when(held.checked_at, true)} · last recorded `,
            h('strong', null, money(l.last_price, l.last_currency)),
          ),
          h('p', { class: 'held-reason' }, h('span', { class: 'muted' }, 'Why held: '), held.reason),
          heldActions(l.id, held.check_id, answerSlot, reload),
        );
      }),
    ),
  );
}

export function shortUrl(url: string): string {
  try {
    const u = new URL(url);
    const path = u.pathname + u.search;
    return u.host + (path.length > 32 ? `${path.slice(0, 31)}…` : path === '/' ? '' : path);
  } catch {
    return url;
  }
}

function competitorsView(comps: Map<string, Competitor>): Child {
  const err = h('div');
  const submit = h('button', { type: 'submit' }, 'Add competitor');
  const form = h(
    'form',
    { class: 'inline-form', novalidate: true, 'aria-label': 'Add a competitor' },
    field({ name: 'name', label: 'Name', required: true, maxlength: 200 }),
    field({ name: 'website', label: 'Website', type: 'url', required: true, placeholder: 'https://shop.example' }),
    h('div', { class: 'actions' }, submit),
    err,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    void withBusy(submit, err, async () => {
      try {
        const c = await ph.POST('/api/v1/competitors', {
          body: { name: control(form, 'name')!.value, website: control(form, 'website')!.value },
        });
        toast(`Added ${c.name}.`);
        go('/listings', { competitor_id: c.id });
      } catch (e2) {
        if (e2 instanceof ApiError && showFieldErrors(form, e2.details).length === 0 && e2.details.length > 0) return;
        throw e2;
      }
    });
  });
  return [
    table(
      'Competitors',
      [
        {
          title: 'Name',
          cell: (c: Competitor) => h('a', { href: href('/listings', { competitor_id: c.id }) }, c.name),
        },
        { title: 'Website', cell: (c) => extLink(c.website, c.domain) },
        { title: 'Listings', class: 'num', cell: (c) => count(c.listing_count) },
      ],
      [...comps.values()],
      'No competitors yet.',
    ),
    h('h3', null, 'Add a competitor'),
    form,
  ];
}

/**
 * POST /listings. With `product` (a product's page, or the listings of one product) the form is
 * for that product: its name is shown and its id sent, nothing to paste. Without, the product's id.
 */
export function addListingForm(
  comps: Map<string, Competitor>,
  product: { id: string; name: string } | undefined,
  done: () => void,
): HTMLElement {
  const err = h('div');
  const submit = h('button', { type: 'submit' }, 'Add listing');
  const productField = product
    ? h(
        'div',
        { class: 'field' },
        h('span', { class: 'label' }, 'Product'),
        h('p', { 'data-testid': 'listing-product' }, h('strong', null, product.name)),
        h('input', { type: 'hidden', name: 'product_id', value: product.id }),
      )
    : field({
        name: 'product_id',
        label: 'Product id',
        required: true,
        placeholder: 'prod_…',
        hint: 'Open a product and add its listing there: the product is then filled in',
      });
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true, 'aria-label': 'Add a listing' },
    productField,
    selectField({
      name: 'competitor_id',
      label: 'Where',
      options: [['', 'Our own shop'], ...[...comps.values()].map((c) => [c.id, c.name] as const)],
    }),
    field({
      name: 'url',
      label: 'Page address',
      type: 'url',
      hint: "Required for a competitor's page; our own defaults to the product's page",
    }),
    field({
      name: 'selector',
      label: 'CSS selector (optional)',
      hint: 'Pins the element holding the price; try it in the dry run below first',
    }),
    field({
      name: 'check_interval_seconds',
      label: 'Check every (seconds)',
      type: 'number',
      value: 21600,
      min: '300',
      max: '2592000',
    }),
    checkbox({ name: 'render_js', label: 'Render with a browser (pages that need JavaScript)' }),
    err,
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const v = (k: string) => control(form, k)?.value.trim() ?? '';
    const productId = product?.id ?? v('product_id');
    const body: ListingCreate = {
      product_id: productId,
      competitor_id: v('competitor_id') || null,
      check_interval_seconds: Number(v('check_interval_seconds')),
    };
    if (v('url')) body.url = v('url');
    if (v('selector')) body.selector = v('selector');
    if ((control(form, 'render_js') as HTMLInputElement).checked) body.render_js = true;
    void withBusy(submit, err, async () => {
      try {
        await ph.POST('/api/v1/listings', { body });
      } catch (e2) {
        if (e2 instanceof ApiError && e2.details.length > 0 && showFieldErrors(form, e2.details).length === 0) return;
        throw e2;
      }
      toast('Listing added; its first check is due now.');
      done();
    });
  });
  return form;
}

/** POST /extract: fetch a page as a check would and show every candidate, saving nothing. */
function extractForm(): HTMLElement {
  const out = h('div', { 'aria-live': 'polite', 'data-testid': 'extract-result' });
  const submit = h('button', { type: 'submit' }, 'Try it');
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true, 'aria-label': 'Dry-run extraction' },
    field({
      name: 'url',
      label: 'Page address',
      type: 'url',
      required: true,
      placeholder: 'https://shop.example/product',
    }),
    field({ name: 'selector', label: 'CSS selector (optional)' }),
    field({ name: 'currency_override', label: 'Currency override (optional)', maxlength: 3 }),
    checkbox({ name: 'render_js', label: 'Render with a browser' }),
    checkbox({ name: 'respect_robots', label: 'Respect robots.txt', checked: true }),
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const v = (k: string) => control(form, k)?.value.trim() ?? '';
    const body: ExtractRequest = {
      url: v('url'),
      render_js: (control(form, 'render_js') as HTMLInputElement).checked,
      respect_robots: (control(form, 'respect_robots') as HTMLInputElement).checked,
    };
    if (v('selector')) body.selector = v('selector');
    if (v('currency_override')) body.currency_override = v('currency_override');
    void withBusy(submit, out, async () => {
      put(out, loading('Fetching the page…'));
      let x: Extraction;
      try {
        x = await ph.POST('/api/v1/extract', { body });
      } catch (e2) {
        if (e2 instanceof ApiError && e2.details.length > 0) {
          const rest = showFieldErrors(form, e2.details);
          put(out, rest.length ? errorBox(e2) : h('p', { class: 'notice error' }, describeError(e2)));
          return;
        }
        throw e2;
      }
      put(
        out,
        h(
          'h3',
          null,
          x.ok
            ? `A check would record ${money(x.price, x.currency)} (${stock(x.in_stock)})`
            : `A check would fail: ${x.error_code ?? ''}`,
        ),
        x.error ? h('p', { class: 'notice error' }, x.error) : null,
        x.chosen
          ? h(
              'p',
              null,
              'Chosen: ',
              h('strong', null, x.chosen.source),
              ' at ',
              h('code', null, x.chosen.detail ?? '—'),
              ', raw text ',
              h('code', null, x.chosen.raw ?? '—'),
              ' — the first candidate in order of preference that was not ignored.',
            )
          : x.failure
            ? h('p', null, 'Nothing chosen: ', x.failure)
            : null,
        x.fetch
          ? h(
              'p',
              { class: 'muted' },
              `HTTP ${x.fetch.status} · ${x.fetch.content_type ?? ''} · ${count(x.fetch.bytes)} bytes · ${x.fetch.ms} ms`,
              x.fetch.redirects.length ? ` · ${x.fetch.redirects.length} redirects` : '',
              ' · ',
              extLink(x.fetch.final_url),
            )
          : null,
        evidenceView(
          null,
          x.candidates.find((c) => c.chosen),
        ),
        candidatesTable(x.candidates),
        x.notes.length
          ? h(
              'ul',
              { class: 'notes' },
              x.notes.map((n) => h('li', null, n)),
            )
          : null,
      );
    });
  });
  return h(
    'div',
    null,
    h(
      'p',
      { class: 'muted' },
      'Fetches a page the way a check would (robots.txt, address rules, the same extractor) and shows every price found. Saves nothing.',
    ),
    form,
    out,
  );
}

// ---- CSV import of listings ----

/** Items per POST /listings/batch: small enough for steady progress (the API takes 1000). */
export const LISTING_IMPORT_CHUNK = 200;

interface ListingRowError {
  line: number;
  sku: string;
  url: string;
  field: string;
  message: string;
}

/** The listing import: a CSV file or pasted text, read and sent by the client's importListings (as `pricehound import listings`). */
function openListingImport(done: () => void): void {
  const fileId = 'listing-import-file';
  const textId = 'listing-import-text';
  const input = h('input', {
    id: fileId,
    name: 'file',
    type: 'file',
    accept: '.csv,text/csv',
    'aria-describedby': 'listing-import-help',
  });
  const pasted = h('textarea', {
    id: textId,
    name: 'csv',
    rows: 6,
    spellcheck: false,
    placeholder: 'sku,url,competitor\nKT-1,https://shop.example/kettle,',
    'aria-describedby': 'listing-import-help',
  });
  const start = h('button', { type: 'submit' }, 'Import');
  const cancel = h('button', { type: 'button', class: 'secondary' }, 'Close');
  const progress = h('progress', { max: 1, value: 0, 'aria-label': 'Import progress', hidden: true });
  const status = h('p', { role: 'status', 'aria-live': 'polite', 'data-testid': 'listing-import-status' });
  const errorsSlot = h('div', { 'data-testid': 'listing-import-errors' });
  let controller: AbortController | null = null;
  const form = h(
    'form',
    { novalidate: true, 'aria-label': 'Import listings from CSV' },
    h(
      'p',
      { id: 'listing-import-help' },
      "A header row, then one competitor's page per row. Columns: ",
      h('code', null, LISTING_CSV_COLUMNS.join(', ')),
      ` (${LISTING_CSV_REQUIRED.join(', ')} required). `,
      h('code', null, 'sku'),
      " is the product's SKU; ",
      h('code', null, 'competitor'),
      " a competitor's name or id, or empty: the competitor of the page's domain (made when there is none). A page the product already has is left as it is; a bad row is reported and the others are still created.",
    ),
    h('div', { class: 'field' }, h('label', { for: fileId }, 'CSV file'), input),
    h('div', { class: 'field' }, h('label', { for: textId }, 'Or paste the CSV'), pasted),
    progress,
    status,
    errorsSlot,
    h('div', { class: 'actions' }, cancel, start),
  );
  const { close } = modal('Import listings', form, { onClose: () => controller?.abort() });
  cancel.addEventListener('click', () => (controller ? controller.abort() : close()));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const file = input.files?.[0];
    if (!file && pasted.value.trim() === '') {
      put(status, 'Choose a CSV file or paste its text first.');
      input.focus();
      return;
    }
    void withBusy(start, errorsSlot, async () => {
      controller = new AbortController();
      cancel.textContent = 'Stop';
      try {
        await runListingImport(
          file ? await file.text() : pasted.value,
          controller.signal,
          progress,
          status,
          errorsSlot,
        );
      } finally {
        controller = null;
        cancel.textContent = 'Close';
        done();
      }
    });
  });
  input.focus();
}

async function runListingImport(
  text: string,
  signal: AbortSignal,
  progress: HTMLProgressElement,
  status: HTMLElement,
  errorsSlot: HTMLElement,
): Promise<void> {
  const { rows, ignored } = readListingsCsv(text);
  const total = rows.length;
  progress.hidden = false;
  progress.max = Math.max(1, total);
  let done = 0;
  const tally = { created: 0, present: 0, failed: 0 };
  const refused: ImportedListing[] = [];
  const report = (final = false) => {
    progress.value = done;
    put(
      status,
      `${final ? 'Done' : 'Importing'}: ${count(done)} of ${count(total)} rows, ${count(tally.created)} created, ` +
        `${count(tally.present)} already there, ${count(tally.failed)} with errors.`,
      ignored.length ? ` Columns ignored: ${ignored.join(', ')}.` : '',
    );
  };
  report();
  for await (const batch of importListings(ph, rows, { batchSize: LISTING_IMPORT_CHUNK, signal })) {
    for (const r of batch) {
      tally[r.result]++;
      if (r.result === 'failed') refused.push(r);
    }
    done += batch.length;
    report();
  }
  report(true);
  const errors: ListingRowError[] = refused
    .sort((a, b) => a.line - b.line)
    .flatMap((r) =>
      r.problems.map((d) => ({ line: r.line, sku: r.sku, url: r.url, field: d.field, message: d.message })),
    );
  const csv = csvRow(LISTING_IMPORT_ERROR_COLUMNS) + refused.map(listingImportErrorRows).join('');
  put(
    errorsSlot,
    errors.length === 0
      ? null
      : [
          table(
            'Rows not imported',
            [
              { title: 'Line', class: 'num', cell: (e: ListingRowError) => String(e.line) },
              { title: 'SKU', cell: (e) => e.sku || '—' },
              { title: 'Page', cell: (e) => (e.url ? shortUrl(e.url) : '—') },
              { title: 'Field', cell: (e) => h('code', null, e.field || '—') },
              { title: 'Problem', cell: (e) => e.message },
            ],
            errors,
          ),
          h(
            'p',
            null,
            h(
              'a',
              {
                href: URL.createObjectURL(new Blob([csv], { type: 'text/csv' })),
                download: 'listing-import-errors.csv',
              },
              'Download these errors as CSV',
            ),
          ),
        ],
  );
}
