import { ApiError, api, type Page as ListPage, newIdempotencyKey } from '../api';
import { type Child, h, put } from '../dom';
import { when } from '../format';
import { competitorMap, competitorName, productsByIds } from '../names';
import { type PageContext, pageHeader } from '../page';
import { go, href } from '../router';
import type { AlertEvent, AlertRule, Competitor, Condition, ConditionType, Product } from '../types';
import { checkbox, clearErrors, confirmDialog, control, errorBox, field, listOrMissing, loading, section, selectField, showFieldErrors, table, toast, withBusy } from '../ui';

/** Each condition type, how it reads, and the fields it takes (design/API.md "Alerts"). */
const CONDITIONS: Record<ConditionType, { label: string; fields: (keyof Condition)[] }> = {
  price_below: { label: 'A price falls below a threshold', fields: ['threshold', 'currency'] },
  price_above: { label: 'A price rises above a threshold', fields: ['threshold', 'currency'] },
  price_drop: { label: 'A price drops by at least…', fields: ['percent', 'amount'] },
  price_rise: { label: 'A price rises by at least…', fields: ['percent', 'amount'] },
  undercut: { label: 'A competitor undercuts our price', fields: ['margin_percent', 'margin_amount'] },
  not_cheapest: { label: 'We stop being the cheapest', fields: [] },
  lowest_in_days: { label: 'A price is the lowest in N days', fields: ['days'] },
  back_in_stock: { label: 'An offer is back in stock', fields: [] },
  out_of_stock: { label: 'An offer goes out of stock', fields: [] },
  listing_failing: { label: 'A listing\'s checks keep failing', fields: ['failures'] },
};

const CONDITION_FIELD_LABELS: Record<string, [string, string]> = {
  threshold: ['Threshold', 'e.g. 45.00'],
  currency: ['Currency of the threshold', 'Default: the product\'s'],
  percent: ['By percent', 'e.g. 5'],
  amount: ['By amount', 'e.g. 2.50'],
  margin_percent: ['Margin (percent of our price)', 'Default 0'],
  margin_amount: ['Margin (amount)', ''],
  days: ['Days', '1 to 365'],
  failures: ['Failures in a row', 'Default 3'],
};

const describeCondition = (c: Condition) => {
  const extra = Object.entries(c)
    .filter(([k]) => k !== 'type')
    .map(([k, v]) => `${k.replace('_', ' ')} ${String(v)}`)
    .join(', ');
  return `${CONDITIONS[c.type]?.label ?? c.type}${extra ? ` (${extra})` : ''}`;
};

export async function alertsPage(ctx: PageContext): Promise<void> {
  pageHeader(ctx, 'Alerts');
  const listed = await listOrMissing<AlertRule>(ctx, '/alerts', 'Alerts');
  if (!listed) return;
  let rules = listed;
  const [comps, products] = await Promise.all([
    competitorMap().catch(() => new Map<string, Competitor>()),
    api<ListPage<Product>>('/products', { query: { sort: 'name', limit: 100 }, signal: ctx.signal }).then((p) => p.data),
  ]);
  const names = await productsByIds(rules.map((r) => r.product_id).filter((x): x is string => x !== null));
  for (const p of products) names.set(p.id, p);

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
              r.product_id ? h('a', { href: href(`/products/${r.product_id}`) }, names.get(r.product_id)?.name ?? r.product_id) : 'every product',
              ' · ',
              r.competitor_id ? competitorName(comps, r.competitor_id) : 'every seller',
            ],
          },
          { title: 'When', cell: (r) => describeCondition(r.condition) },
          { title: 'Re-arms', cell: (r) => r.rearm.replace('_', ' ') + (r.confirmations > 1 ? `, ${r.confirmations} confirmations` : '') },
          { title: 'State', cell: (r) => (r.enabled ? 'enabled' : 'disabled') },
          {
            title: 'Actions',
            cell: (r) => {
              const toggle = h('button', { type: 'button', class: 'secondary small' }, r.enabled ? 'Disable' : 'Enable');
              toggle.addEventListener('click', () =>
                void withBusy(toggle, null, async () => {
                  const updated = await api<AlertRule>(`/alerts/${encodeURIComponent(r.id)}`, { method: 'PATCH', body: { enabled: !r.enabled } });
                  rules = rules.map((x) => (x.id === r.id ? updated : x));
                  renderRules();
                }),
              );
              const test = h('button', { type: 'button', class: 'secondary small' }, 'Test');
              test.addEventListener('click', () =>
                void withBusy(test, null, async () => {
                  await api(`/alerts/${encodeURIComponent(r.id)}/test`, { method: 'POST', idempotencyKey: newIdempotencyKey() });
                  toast(`Test event of “${r.name}” recorded.`);
                  await renderEvents();
                }),
              );
              const del = h('button', { type: 'button', class: 'danger small' }, 'Delete');
              del.addEventListener('click', () =>
                void (async () => {
                  if (!(await confirmDialog(`Delete the rule “${r.name}”? Its events go with it.`, 'Delete rule'))) return;
                  await withBusy(del, null, async () => {
                    await api(`/alerts/${encodeURIComponent(r.id)}`, { method: 'DELETE' });
                    rules = rules.filter((x) => x.id !== r.id);
                    renderRules();
                    toast(`Deleted “${r.name}”.`);
                  });
                })(),
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

  const state = ctx.query.get('state') ?? 'open';
  const eventsSlot = h('div', { 'data-testid': 'alert-events' }, loading());
  const renderEvents = async () => {
    try {
      const page = await api<ListPage<AlertEvent>>('/alert-events', { query: { state: state === 'all' ? undefined : state, limit: 50 }, signal: ctx.signal });
      const prods = await productsByIds(page.data.map((e) => e.product_id).filter((x): x is string => x !== null));
      const open = page.data.filter((e) => !e.acknowledged_at);
      const ackAll = h('button', { type: 'button', class: 'secondary', disabled: open.length === 0 }, `Acknowledge all ${open.length} shown`);
      ackAll.addEventListener('click', () =>
        void withBusy(ackAll, null, async () => {
          await api('/alert-events/acknowledge', { method: 'POST', body: { ids: open.map((e) => e.id) } });
          toast(`Acknowledged ${open.length} events.`);
          await renderEvents();
        }),
      );
      put(
        eventsSlot,
        table(
          'Alert events, newest first',
          [
            { title: 'When', cell: (e: AlertEvent) => h('time', { datetime: e.created_at }, when(e.created_at)) },
            { title: 'What', cell: (e) => [e.message, e.test ? h('span', { class: 'badge muted' }, 'test') : null] },
            { title: 'Product', cell: (e) => (e.product_id ? h('a', { href: href(`/products/${e.product_id}`) }, prods.get(e.product_id)?.name ?? e.product_id) : '—') },
            {
              title: 'State',
              cell: (e) => {
                if (e.acknowledged_at) return `acknowledged ${when(e.acknowledged_at)}`;
                const ack = h('button', { type: 'button', class: 'small' }, 'Acknowledge');
                ack.addEventListener('click', () =>
                  void withBusy(ack, null, async () => {
                    await api(`/alert-events/${encodeURIComponent(e.id)}/acknowledge`, { method: 'POST' });
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
    ].map(([k, label]) => h('a', { href: href('/alerts', { state: k }), 'aria-current': k === state ? 'true' : undefined }, label!)),
  );

  const refresh = h('button', { type: 'button', class: 'secondary small' }, 'Refresh events');
  refresh.addEventListener('click', () => void withBusy(refresh, null, renderEvents));
  ctx.main.append(
    section('Events', h('div', { class: 'toolbar' }, tabs, refresh), eventsSlot),
    section('Rules', rulesSlot),
    section('New rule', ruleForm(products, comps, ctx.query.get('product_id'), (r) => {
      rules = [r, ...rules];
      renderRules();
    })),
  );
  await renderEvents();
}

function ruleForm(products: Product[], comps: Map<string, Competitor>, productId: string | null, created: (r: AlertRule) => void): HTMLElement {
  const err = h('div');
  const previewSlot = h('div', { 'aria-live': 'polite', 'data-testid': 'alert-preview' });
  const conditionFields = h('div', { class: 'condition-fields' });
  const typeSelect = selectField({
    name: 'condition.type',
    label: 'When',
    options: Object.entries(CONDITIONS).map(([k, v]) => [k, v.label] as const),
    onchange: () => renderConditionFields(),
  });
  const renderConditionFields = () => {
    const type = (control(form, 'condition.type')?.value ?? 'price_below') as ConditionType;
    put(
      conditionFields,
      CONDITIONS[type].fields.map((f) => {
        const [label, hint] = CONDITION_FIELD_LABELS[f]!;
        return field({ name: `condition.${f}`, label, hint, inputmode: f === 'currency' ? undefined : 'decimal', required: f === 'threshold' || f === 'days', maxlength: f === 'currency' ? 3 : undefined });
      }),
    );
  };
  const previewBtn = h('button', { type: 'button', class: 'secondary' }, 'Preview the last 30 days');
  const submit = h('button', { type: 'submit' }, 'Create rule');
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true, 'aria-label': 'New alert rule' },
    field({ name: 'name', label: 'Name', required: true, maxlength: 200, placeholder: 'Kettle undercut' }),
    selectField({ name: 'product_id', label: 'Product', options: [['', 'Every product'], ...products.map((p) => [p.id, p.name] as const)], value: productId }),
    selectField({ name: 'competitor_id', label: 'Seller', options: [['', 'Every competitor'], ...[...comps.values()].map((c) => [c.id, c.name] as const)] }),
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
    field({ name: 'cooldown_seconds', label: 'Cooldown (seconds)', type: 'number', value: 0, min: '0' }),
    field({ name: 'confirmations', label: 'Confirmations', type: 'number', value: 1, min: '1', hint: 'Observations in a row the condition must hold' }),
    field({ name: 'daily_cap', label: 'At most per day', type: 'number', min: '1', hint: 'Empty: no cap' }),
    checkbox({ name: 'enabled', label: 'Enabled', checked: true }),
    err,
    h('div', { class: 'actions' }, previewBtn, submit),
    previewSlot,
  );
  renderConditionFields();

  const read = (): Record<string, unknown> => {
    const v = (k: string) => control(form, k)?.value.trim() ?? '';
    const type = v('condition.type') as ConditionType;
    const condition: Record<string, unknown> = { type };
    for (const f of CONDITIONS[type].fields) {
      const val = v(`condition.${f}`);
      if (val === '') continue;
      condition[f] = f === 'currency' ? val.toUpperCase() : Number.isFinite(Number(val)) ? Number(val) : val;
    }
    const body: Record<string, unknown> = {
      name: v('name'),
      product_id: v('product_id') || null,
      competitor_id: v('competitor_id') || null,
      condition,
      rearm: v('rearm'),
      cooldown_seconds: Number(v('cooldown_seconds') || 0),
      confirmations: Number(v('confirmations') || 1),
      daily_cap: v('daily_cap') ? Number(v('daily_cap')) : null,
      enabled: (control(form, 'enabled') as HTMLInputElement).checked,
    };
    return body;
  };
  const fail = (e: unknown) => {
    if (e instanceof ApiError && e.details.length > 0) {
      const rest = showFieldErrors(form, e.details);
      if (rest.length === 0) return;
    }
    throw e;
  };

  previewBtn.addEventListener('click', () => {
    clearErrors(form);
    void withBusy(previewBtn, err, async () => {
      const to = new Date();
      const from = new Date(to.getTime() - 30 * 86_400_000);
      const body = read();
      if (!body.name) delete body.name;
      let res: { data: AlertEvent[]; count: number };
      try {
        res = await api<{ data: AlertEvent[]; count: number }>('/alerts/preview', { method: 'POST', body: { ...body, from: from.toISOString(), to: to.toISOString() } });
      } catch (e) {
        fail(e);
        return;
      }
      put(
        previewSlot,
        h('h3', null, `Would have fired ${res.count} time${res.count === 1 ? '' : 's'} in the last 30 days`),
        res.data.length === 0
          ? h('p', { class: 'muted' }, 'Nothing in the stored prices would have fired it.')
          : h('ul', { class: 'events' }, res.data.slice(0, 100).map((e): Child => h('li', null, h('time', { datetime: e.current?.observed_at ?? e.created_at }, when(e.current?.observed_at ?? e.created_at)), ' — ', e.message))),
      );
    });
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    void withBusy(submit, err, async () => {
      let rule: AlertRule;
      try {
        rule = await api<AlertRule>('/alerts', { method: 'POST', body: read(), idempotencyKey: newIdempotencyKey() });
      } catch (e2) {
        fail(e2);
        return;
      }
      toast(`Created the rule “${rule.name}”.`);
      created(rule);
      form.reset();
      renderConditionFields();
      put(previewSlot);
      go('/alerts', { state: 'open' });
    });
  });
  return form;
}
