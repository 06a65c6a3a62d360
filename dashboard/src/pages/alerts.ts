import type { SuccessData } from '@pricehound/client';
import { ApiError, ph, take } from '../api';
import { type Child, h, put } from '../dom';
import { money, when } from '../format';
import { combobox, type Option, optionFor } from '../combobox';
import { competitorMap, competitorName, productsByIds } from '../names';
import { type PageContext, pageHeader } from '../page';
import { go, href } from '../router';
import type {
  AlertEvent,
  AlertMatch,
  AlertMatches,
  AlertMatchQuery,
  AlertPreview,
  AlertRule,
  AlertRuleInput,
  Competitor,
  Condition,
  ConditionType,
} from '../types';
import {
  checkbox,
  clearErrors,
  control,
  deleteButton,
  enableToggle,
  errorBox,
  field,
  loading,
  section,
  selectField,
  showFieldErrors,
  table,
  toast,
  withBusy,
} from '../ui';

type KeysOf<U> = U extends unknown ? keyof U : never;
/** A field of some condition object (generated from the API's AlertCondition). */
type ConditionField = Exclude<KeysOf<Condition>, 'type'>;
type Variant<T extends ConditionType> = Extract<Condition, { type: T }>;

/**
 * Each condition type, how it reads, and the fields it takes: `tsc` checks each field against
 * that type's condition object in the OpenAPI document, and `series` (the condition watches a
 * price series, competitors' by default or our own) against whether that object has one.
 * `preview: false`: POST /alerts/preview refuses it (no history of ranks or of failed checks).
 */
const CONDITIONS: {
  [T in ConditionType]: {
    label: string;
    fields: Exclude<keyof Variant<T>, 'type' | 'series'>[];
    series: 'series' extends keyof Variant<T> ? true : false;
    preview: boolean;
  };
} = {
  price_below: {
    label: 'A price falls below a threshold',
    fields: ['threshold', 'currency'],
    series: true,
    preview: true,
  },
  price_above: {
    label: 'A price rises above a threshold',
    fields: ['threshold', 'currency'],
    series: true,
    preview: true,
  },
  price_drop: { label: 'A price drops by at least…', fields: ['percent', 'amount'], series: true, preview: true },
  price_rise: { label: 'A price rises by at least…', fields: ['percent', 'amount'], series: true, preview: true },
  undercut: {
    label: 'A competitor undercuts our price',
    fields: ['margin_percent', 'margin_amount'],
    series: false,
    preview: true,
  },
  not_cheapest: { label: 'We stop being the cheapest', fields: [], series: false, preview: false },
  lowest_in_days: { label: 'A price is the lowest in N days', fields: ['days'], series: true, preview: true },
  back_in_stock: { label: 'An offer is back in stock', fields: [], series: true, preview: true },
  out_of_stock: { label: 'An offer goes out of stock', fields: [], series: true, preview: true },
  listing_failing: { label: "A listing's checks keep failing", fields: ['failures'], series: false, preview: false },
};

const CONDITION_FIELD_LABELS: Record<Exclude<ConditionField, 'series'>, [string, string]> = {
  threshold: ['Threshold', 'e.g. 45.00'],
  currency: ['Currency of the threshold', "Default: the product's"],
  percent: ['By percent', 'e.g. 5 (percent, amount or both)'],
  amount: ['By amount', 'e.g. 2.50'],
  margin_percent: ['Margin (percent of our price)', 'Default 0; a percent or an amount, not both'],
  margin_amount: ['Margin (amount)', ''],
  days: ['Days', '1 to 365'],
  failures: ['Failures in a row', 'Default 3'],
};

const words = (k: string) => k.replaceAll('_', ' ');

const describeCondition = (c: Condition) => {
  const extra = Object.entries(c)
    .filter(([k]) => k !== 'type')
    .map(([k, v]) => `${words(k)} ${String(v)}`)
    .join(', ');
  return `${CONDITIONS[c.type]?.label ?? c.type}${extra ? ` (${extra})` : ''}`;
};

/** The price an event is about, e.g. "43.00 EUR, was 46.00 EUR". */
const eventPrice = (e: Pick<AlertEvent, 'current' | 'previous'>) =>
  e.current
    ? `${money(e.current.price, e.current.currency)}${e.previous ? `, was ${money(e.previous.price, e.previous.currency)}` : ''}`
    : '—';

export async function alertsPage(ctx: PageContext): Promise<void> {
  pageHeader(ctx, 'Alerts');
  let rules = await take(ph.paginate('/api/v1/alerts', { signal: ctx.signal }), 500);
  // "New alert" from a product's page (or any link with product_id) comes with that product
  // chosen; an id that names no product of the account is said so, never "every product".
  const askedProduct = ctx.query.get('product_id');
  const [comps, names, preset] = await Promise.all([
    competitorMap().catch(() => new Map<string, Competitor>()),
    productsByIds(rules.map((r) => r.product_id).filter((x): x is string => x !== null)),
    askedProduct ? optionFor('product', askedProduct, ctx.signal) : Promise.resolve(null),
  ]);

  const rulesSlot = h('div');
  const renderRules = () =>
    put(
      rulesSlot,
      table(
        'Alert rules',
        [
          { title: 'Name', cell: (r: AlertRule) => r.name },
          {
            title: 'Watches',
            cell: (r) => [
              r.product_id
                ? h('a', { href: href(`/products/${r.product_id}`) }, names.get(r.product_id)?.name ?? r.product_id)
                : 'every product',
              ' · ',
              r.competitor_id ? competitorName(comps, r.competitor_id) : 'every seller',
              r.listing_id ? [' · listing ', h('code', null, r.listing_id)] : null,
            ],
          },
          { title: 'When', cell: (r) => describeCondition(r.condition) },
          {
            title: 'Re-arms',
            cell: (r) =>
              [
                words(r.rearm),
                r.rearm === 'cooldown' ? `after ${r.cooldown_seconds} s` : null,
                r.rearm === 'on_clear' && r.hysteresis_percent > 0 ? `clears ${r.hysteresis_percent} % past` : null,
                r.confirmations > 1 ? `${r.confirmations} confirmations` : null,
                r.daily_cap !== null ? `at most ${r.daily_cap} a day` : null,
              ]
                .filter(Boolean)
                .join(', '),
          },
          { title: 'State', cell: (r) => (r.enabled ? 'enabled' : 'disabled') },
          {
            title: 'Actions',
            cell: (r) => {
              const toggle = enableToggle(
                r.enabled,
                (enabled) => ph.PATCH('/api/v1/alerts/{id}', { params: { path: { id: r.id } }, body: { enabled } }),
                (updated) => {
                  rules = rules.map((x) => (x.id === r.id ? updated : x));
                  renderRules();
                },
              );
              const test = h('button', { type: 'button', class: 'secondary small' }, 'Test');
              test.addEventListener(
                'click',
                () =>
                  void withBusy(test, null, async () => {
                    const e = await ph.POST('/api/v1/alerts/{id}/test', { params: { path: { id: r.id } } });
                    toast(`Test event of “${r.name}” recorded: ${e.message}`);
                    await renderEvents();
                  }),
              );
              const del = deleteButton(
                `Delete the rule “${r.name}”? Its events go with it.`,
                'Delete rule',
                async () => {
                  await ph.DELETE('/api/v1/alerts/{id}', { params: { path: { id: r.id } } });
                  rules = rules.filter((x) => x.id !== r.id);
                  renderRules();
                  toast(`Deleted “${r.name}”.`);
                },
              );
              return h('div', { class: 'row-actions' }, toggle, test, del);
            },
          },
        ],
        rules,
        'No rules yet: create one below.',
      ),
    );
  renderRules();

  const asked = ctx.query.get('state') ?? 'open';
  const state = asked === 'all' || asked === 'acknowledged' ? asked : 'open';
  const eventsSlot = h('div', { 'data-testid': 'alert-events' }, loading());
  const renderEvents = async () => {
    try {
      const page = await ph.GET('/api/v1/alert-events', {
        params: { query: { state: state === 'all' ? undefined : state, limit: 50 } },
        signal: ctx.signal,
      });
      const prods = await productsByIds(
        page.data.map((e) => e.product_id).filter((x): x is string => x !== null && !names.has(x)),
      );
      for (const [id, p] of names) prods.set(id, p);
      const ruleNames = new Map(rules.map((r) => [r.id, r.name]));
      const open = page.data.filter((e) => !e.acknowledged_at);
      const ackAll = h(
        'button',
        { type: 'button', class: 'secondary', disabled: open.length === 0 },
        `Acknowledge all ${open.length} shown`,
      );
      ackAll.addEventListener(
        'click',
        () =>
          void withBusy(ackAll, null, async () => {
            const r = await ph.POST('/api/v1/alert-events/acknowledge', { body: { ids: open.map((e) => e.id) } });
            toast(
              `Acknowledged ${r.count} events${r.not_found.length ? `; ${r.not_found.length} were gone (their rule deleted)` : ''}.`,
            );
            await renderEvents();
          }),
      );
      put(
        eventsSlot,
        table(
          'Alert events, newest first',
          [
            { title: 'When', cell: (e: AlertEvent) => h('time', { datetime: e.created_at }, when(e.created_at)) },
            { title: 'Rule', cell: (e) => ruleNames.get(e.alert_id) ?? e.alert_id },
            {
              title: 'What',
              cell: (e) => [e.message, e.test ? [' ', h('span', { class: 'badge muted' }, 'test')] : null],
            },
            { title: 'Price', cell: (e) => eventPrice(e) },
            {
              title: 'Product',
              cell: (e) =>
                e.product_id
                  ? h('a', { href: href(`/products/${e.product_id}`) }, prods.get(e.product_id)?.name ?? e.product_id)
                  : '—',
            },
            {
              title: 'Seller',
              cell: (e) => (e.competitor_id ? competitorName(comps, e.competitor_id) : e.product_id ? 'our shop' : '—'),
            },
            {
              title: 'State',
              cell: (e) => {
                if (e.acknowledged_at) return `acknowledged ${when(e.acknowledged_at)}`;
                const ack = h('button', { type: 'button', class: 'small' }, 'Acknowledge');
                ack.addEventListener(
                  'click',
                  () =>
                    void withBusy(ack, null, async () => {
                      await ph.POST('/api/v1/alert-events/{id}/acknowledge', { params: { path: { id: e.id } } });
                      toast('Acknowledged.');
                      await renderEvents();
                    }),
                );
                return ack;
              },
            },
          ],
          page.data,
          state === 'open' ? 'No open events.' : 'No events.',
        ),
        open.length > 0 ? h('div', { class: 'actions' }, ackAll) : null,
      );
    } catch (err) {
      if (!ctx.signal.aborted) put(eventsSlot, errorBox(err));
    }
  };

  const tabs = h(
    'nav',
    { class: 'segmented', 'aria-label': 'Which events' },
    [
      ['open', 'Open'],
      ['acknowledged', 'Acknowledged'],
      ['all', 'All'],
    ].map(([k, label]) =>
      h('a', { href: href('/alerts', { state: k }), 'aria-current': k === state ? 'true' : undefined }, label!),
    ),
  );

  const refresh = h('button', { type: 'button', class: 'secondary small' }, 'Refresh events');
  refresh.addEventListener('click', () => void withBusy(refresh, null, renderEvents));
  const newRule = section(
    'New rule',
    ruleForm(comps, askedProduct, preset, (r) => {
      rules = [r, ...rules];
      renderRules();
    }),
  );
  ctx.main.append(
    section('Events', h('div', { class: 'toolbar' }, tabs, refresh), eventsSlot),
    section('Rules', rulesSlot),
    newRule,
  );
  // Opened from a product's "New alert": the form, with the product chosen, is what the person came for.
  if (askedProduct) {
    newRule.scrollIntoView({ block: 'start' });
    newRule.querySelector<HTMLInputElement>('input[name=name]')?.focus({ preventScroll: true });
  }
  await renderEvents();
}

function ruleForm(
  comps: Map<string, Competitor>,
  askedProduct: string | null,
  preset: Option | null,
  created: (r: AlertRule) => void,
): HTMLElement {
  const err = h('div');
  const productBox = combobox({
    kind: 'product',
    name: 'product_id',
    label: 'Product',
    anyLabel: 'Every product',
    value: preset,
  });
  const competitorBox = combobox({
    kind: 'competitor',
    name: 'competitor_id',
    label: 'Seller',
    anyLabel: 'Every competitor',
  });
  if (askedProduct && !preset) {
    put(
      err,
      h(
        'div',
        { class: 'notice warn', role: 'alert', 'data-testid': 'product-not-found' },
        `No product of this account has the id ${askedProduct}: choose one below (an empty Product means every product).`,
      ),
    );
  }
  const previewSlot = h('div', { 'aria-live': 'polite', 'data-testid': 'alert-preview' });
  const matchesList = h('div', { 'aria-live': 'polite', 'data-testid': 'alert-matches' });
  const fireExisting = checkbox({
    name: 'fire_existing',
    label: 'Also alert for these now',
    hint: 'Unchecked: these fire only once they stop meeting the condition and meet it again.',
  });
  fireExisting.hidden = true;
  const matchesSlot = h('div', { class: 'matches' }, matchesList, fireExisting);
  const conditionFields = h('div', { class: 'condition-fields' });
  const typeSelect = selectField({
    name: 'condition.type',
    label: 'When',
    options: Object.entries(CONDITIONS).map(([k, v]) => [k, v.label] as const),
    onchange: () => renderConditionFields(),
  });
  const renderConditionFields = () => {
    const type = (control(form, 'condition.type')?.value ?? 'price_below') as ConditionType;
    const spec = CONDITIONS[type];
    put(
      conditionFields,
      spec.fields.map((f) => {
        const [label, hint] = CONDITION_FIELD_LABELS[f];
        const integer = f === 'days' || f === 'failures';
        return field({
          name: `condition.${f}`,
          label,
          hint,
          inputmode: f === 'currency' ? undefined : integer ? 'numeric' : 'decimal',
          required: f === 'threshold' || f === 'days',
          maxlength: f === 'currency' ? 3 : undefined,
        });
      }),
      spec.series
        ? selectField({
            name: 'condition.series',
            label: 'Whose prices',
            options: [
              ['competitors', "Competitors' offers (default)"],
              ['own', "Our own shop's price (leave Seller at every competitor)"],
            ],
          })
        : null,
      spec.preview
        ? null
        : h(
            'p',
            { class: 'hint' },
            'This condition cannot be previewed: past ranks and failed checks are not kept as a history.',
          ),
    );
  };
  const previewBtn = h('button', { type: 'button', class: 'secondary' }, 'Preview the last 30 days');
  const submit = h('button', { type: 'submit' }, 'Create rule');
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true, 'aria-label': 'New alert rule' },
    field({ name: 'name', label: 'Name', required: true, maxlength: 200, placeholder: 'Kettle undercut' }),
    productBox.el,
    competitorBox.el,
    typeSelect,
    conditionFields,
    selectField({
      name: 'rearm',
      label: 'Fire again',
      options: [
        ['on_clear', 'After the condition cleared (default)'],
        ['cooldown', 'While it holds, after a cooldown'],
        ['every_change', 'On every qualifying observation'],
      ],
    }),
    field({
      name: 'hysteresis_percent',
      label: 'Clears past (percent)',
      inputmode: 'decimal',
      value: 0,
      hint: 'With "after the condition cleared": how far past the threshold, 0 to 100',
    }),
    field({
      name: 'cooldown_seconds',
      label: 'Cooldown (seconds)',
      type: 'number',
      value: 0,
      min: '0',
      hint: 'With "after a cooldown"',
    }),
    field({
      name: 'confirmations',
      label: 'Confirmations',
      type: 'number',
      value: 1,
      min: '1',
      hint: 'Observations in a row the condition must hold',
    }),
    field({ name: 'daily_cap', label: 'At most per day', type: 'number', min: '1', hint: 'Empty: no cap' }),
    checkbox({ name: 'enabled', label: 'Enabled', checked: true }),
    matchesSlot,
    err,
    h('div', { class: 'actions' }, previewBtn, submit),
    previewSlot,
  );
  renderConditionFields();
  // A preview answers for the form as it was: once the rule changes, it no longer does.
  let previewShown = false;
  form.addEventListener('input', () => {
    if (!previewShown) return;
    previewShown = false;
    put(previewSlot, h('p', { class: 'muted' }, 'The rule changed: preview it again.'));
  });

  /** The form as an AlertCreate body; numbers the API refuses are sent as typed, for its 422. */
  const read = (): AlertRuleInput => {
    const v = (k: string) => control(form, k)?.value.trim() ?? '';
    const num = (k: string) => (Number.isFinite(Number(v(k))) ? Number(v(k)) : v(k));
    const type = v('condition.type') as ConditionType;
    const condition: Record<string, unknown> = { type };
    for (const f of CONDITIONS[type].fields) {
      if (v(`condition.${f}`) === '') continue;
      condition[f] = f === 'currency' ? v(`condition.${f}`).toUpperCase() : num(`condition.${f}`);
    }
    if (CONDITIONS[type].series && v('condition.series') === 'own') condition.series = 'own';
    return {
      name: v('name'),
      product_id: v('product_id') || null,
      competitor_id: v('competitor_id') || null,
      condition: condition as Condition,
      rearm: v('rearm') as AlertRule['rearm'],
      hysteresis_percent: v('hysteresis_percent') === '' ? 0 : (num('hysteresis_percent') as number),
      cooldown_seconds: v('cooldown_seconds') === '' ? 0 : (num('cooldown_seconds') as number),
      confirmations: v('confirmations') === '' ? 1 : (num('confirmations') as number),
      daily_cap: v('daily_cap') ? (num('daily_cap') as number) : null,
      enabled: (control(form, 'enabled') as HTMLInputElement).checked,
      ...(fireBox().checked && !fireExisting.hidden ? { fire_existing: true } : {}),
    };
  };

  /**
   * "N series already meet this condition": POST /alerts/matches for the form as it is, asked a
   * moment after the person stops typing (the answer to an older form is dropped), with the
   * choice to fire them when the rule is saved (`fire_existing`).
   */
  let matches: AlertMatches | null = null;
  let asking: AbortController | null = null;
  let timer: number | undefined;
  const fireBox = () => control(form, 'fire_existing') as HTMLInputElement;
  const renderMatches = () => {
    const enabled = (control(form, 'enabled') as HTMLInputElement).checked;
    fireExisting.hidden = !matches || matches.count === 0;
    fireBox().disabled = !enabled;
    if (!matches) return;
    const n = matches.count;
    put(
      matchesList,
      h(
        'p',
        { class: n > 0 ? 'notice' : 'muted', 'data-testid': 'alert-matches-count' },
        n === 0
          ? 'No series meets this condition now: the rule fires when one comes to meet it.'
          : `${n} series already meet${n === 1 ? 's' : ''} this condition.`,
      ),
      n === 0
        ? null
        : table(
            'Series that already meet the condition',
            [
              { title: 'Product', cell: (m: AlertMatch) => m.product_name },
              {
                title: 'Seller',
                cell: (m) =>
                  m.competitor_id === null ? 'Our shop' : (m.competitor_name ?? competitorName(comps, m.competitor_id)),
              },
              {
                title: 'Price now',
                class: 'num',
                cell: (m) => (m.current ? money(m.current.price, m.current.currency) : '—'),
              },
            ],
            matches.data,
          ),
      n > matches.data.length ? h('p', { class: 'muted' }, `The first ${matches.data.length} of ${n} shown.`) : null,
    );
  };
  /** The body last asked about, without its name (which changes no match). */
  let asked = '';
  const askMatches = async () => {
    if (productBox.unresolved() || competitorBox.unresolved()) return;
    const { fire_existing: _fire, name: _name, ...rule } = read();
    const key = JSON.stringify(rule);
    if (key === asked) return;
    asking?.abort();
    asked = key;
    const c = rule.condition as Record<string, unknown>;
    const incomplete =
      CONDITIONS[rule.condition.type].fields.some((f) => (f === 'threshold' || f === 'days') && c[f] === undefined) ||
      ((c.type === 'price_drop' || c.type === 'price_rise') && c.percent === undefined && c.amount === undefined);
    if (incomplete) {
      matches = null;
      fireExisting.hidden = true;
      put(
        matchesList,
        h(
          'p',
          { class: 'muted', 'data-testid': 'alert-matches-count' },
          'Complete the condition to see which series already meet it.',
        ),
      );
      return;
    }
    const controller = (asking = new AbortController());
    // The matches need no name.
    const body: AlertMatchQuery = { ...rule, name: 'Matches' };
    try {
      const res = await ph.POST('/api/v1/alerts/matches', { body, signal: controller.signal });
      if (controller.signal.aborted) return;
      matches = res;
    } catch (e) {
      if (controller.signal.aborted) return;
      matches = null;
      fireExisting.hidden = true;
      put(
        matchesList,
        e instanceof ApiError && e.status === 422
          ? h(
              'p',
              { class: 'muted', 'data-testid': 'alert-matches-count' },
              'Complete the condition to see which series already meet it.',
            )
          : errorBox(e, {
              retry: () => {
                asked = '';
                void askMatches();
              },
            }),
      );
      return;
    }
    renderMatches();
  };
  const scheduleMatches = () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void askMatches(), 300);
  };
  form.addEventListener('input', (e) => {
    if ((e.target as HTMLInputElement | null)?.name === 'fire_existing') return;
    if ((e.target as HTMLInputElement | null)?.name === 'enabled') return renderMatches();
    scheduleMatches();
  });
  form.addEventListener('change', (e) => {
    if ((e.target as HTMLElement | null)?.tagName === 'SELECT') scheduleMatches();
  });
  scheduleMatches();
  const fail = (e: unknown) => {
    if (e instanceof ApiError && e.details.length > 0) {
      const rest = showFieldErrors(form, e.details);
      if (rest.length === 0) return;
    }
    throw e;
  };

  /** Text typed in a chooser but nothing picked: never sent (it would mean "every ..."). */
  const unpicked = (): boolean => {
    for (const box of [productBox, competitorBox]) {
      if (box.unresolved()) {
        const input = box.el.querySelector('input[role=combobox]') as HTMLInputElement;
        input.setAttribute('aria-invalid', 'true');
        const e = box.el.querySelector('.field-error');
        if (e) e.textContent = 'Pick one from the list (or empty the field for every one).';
        input.focus();
        return true;
      }
    }
    return false;
  };

  previewBtn.addEventListener('click', () => {
    clearErrors(form);
    if (unpicked()) return;
    void withBusy(previewBtn, err, async () => {
      const to = new Date();
      const from = new Date(to.getTime() - 30 * 86_400_000);
      const body = read();
      // A preview needs no name yet.
      if (!body.name) body.name = 'Preview';
      let res: SuccessData<'/api/v1/alerts/preview', 'post'>;
      try {
        const preview: AlertPreview = { ...body, from: from.toISOString(), to: to.toISOString() };
        res = await ph.POST('/api/v1/alerts/preview', { body: preview });
      } catch (e) {
        fail(e);
        return;
      }
      previewShown = true;
      put(
        previewSlot,
        h('h3', null, `Would have fired ${res.count} time${res.count === 1 ? '' : 's'} in the last 30 days`),
        res.data.length === 0
          ? h('p', { class: 'muted' }, 'Nothing in the stored prices would have fired it.')
          : h(
              'ul',
              { class: 'events' },
              res.data
                .slice(0, 100)
                .map((e): Child =>
                  h(
                    'li',
                    null,
                    h('time', { datetime: e.created_at }, when(e.created_at)),
                    ' — ',
                    e.message,
                    e.competitor_id ? ` (${competitorName(comps, e.competitor_id)})` : '',
                  ),
                ),
            ),
        res.count > 100 ? h('p', { class: 'muted' }, `The first 100 of ${res.count} shown.`) : null,
      );
    });
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    if (unpicked()) return;
    void withBusy(submit, err, async () => {
      let rule: AlertRule;
      try {
        rule = await ph.POST('/api/v1/alerts', { body: read() });
      } catch (e2) {
        fail(e2);
        return;
      }
      toast(`Created the rule “${rule.name}”.`);
      created(rule);
      form.reset();
      productBox.set(null);
      competitorBox.set(null);
      renderConditionFields();
      previewShown = false;
      put(previewSlot);
      scheduleMatches();
      go('/alerts', { state: 'open' });
    });
  });
  return form;
}
