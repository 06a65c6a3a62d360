import { EVENT_TYPES } from '@pricehound/client';
import { ph, take } from '../api';
import { h, nextId, put } from '../dom';
import { toLocalInput, when } from '../format';
import { type PageContext, pageHeader } from '../page';
import { go, href } from '../router';
import type { Delivery, Query, Webhook, WebhookCreate, WebhookWithSecret } from '../types';
import {
  badge,
  clearErrors,
  confirmDialog,
  deleteButton,
  enableToggle,
  control,
  errorBox,
  field,
  fieldChecked,
  listPager,
  loading,
  secretDialog,
  section,
  selectField,
  table,
  toast,
  withBusy,
} from '../ui';

/** A secret is shown once (design/API.md): in a dialog, with a copy button, never stored by the page. */
function showSecret(title: string, secret: string): void {
  secretDialog(
    title,
    secret,
    h(
      'p',
      null,
      'This is the only time the secret is shown. Keep it where your receiver verifies signatures (Standard Webhooks).',
    ),
    'webhook-secret',
  );
}

export async function webhooksPage(ctx: PageContext): Promise<void> {
  pageHeader(ctx, 'Webhooks');
  let endpoints = await take(ph.paginate('/api/v1/webhooks', { signal: ctx.signal }), 500);
  const selected = ctx.query.get('id');
  const listSlot = h('div');
  const render = () =>
    put(
      listSlot,
      table(
        'Endpoints',
        [
          {
            title: 'Endpoint',
            cell: (w: Webhook) => [
              h(
                'a',
                { href: href('/webhooks', { id: w.id }), 'aria-current': w.id === selected ? 'true' : undefined },
                w.description || w.url,
              ),
              h('br'),
              h('span', { class: 'muted' }, w.url),
            ],
          },
          { title: 'Events', cell: (w) => (w.event_types.length === 0 ? 'all' : w.event_types.join(', ')) },
          { title: 'Format', cell: (w) => w.format },
          {
            title: 'State',
            cell: (w) =>
              w.enabled
                ? badge('enabled', 'ok')
                : [badge('disabled', 'bad'), w.disabled_reason ? ` ${w.disabled_reason}` : ''],
          },
          {
            title: 'Actions',
            cell: (w) => {
              const test = h('button', { type: 'button', class: 'small' }, 'Send test');
              test.addEventListener(
                'click',
                () =>
                  void withBusy(test, null, async () => {
                    const event = await ph.POST('/api/v1/webhooks/{id}/test', { params: { path: { id: w.id } } });
                    toast(`Test event ${event.id} queued; see the delivery log.`);
                    go('/webhooks', { id: w.id });
                  }),
              );
              const rotate = h('button', { type: 'button', class: 'secondary small' }, 'Rotate secret');
              rotate.addEventListener(
                'click',
                () =>
                  void (async () => {
                    if (
                      !(await confirmDialog(
                        'Make a new signing secret? The old one keeps signing beside it for the overlap (24 hours by default).',
                        'Rotate',
                      ))
                    )
                      return;
                    await withBusy(rotate, null, async () => {
                      const r = await ph.POST('/api/v1/webhooks/{id}/rotate-secret', {
                        params: { path: { id: w.id } },
                      });
                      showSecret('New signing secret', r.secret);
                    });
                  })(),
              );
              const toggle = enableToggle(
                w.enabled,
                (enabled) => ph.PATCH('/api/v1/webhooks/{id}', { params: { path: { id: w.id } }, body: { enabled } }),
                (u) => {
                  endpoints = endpoints.map((x) => (x.id === w.id ? u : x));
                  render();
                },
              );
              const del = deleteButton(
                `Delete the endpoint ${w.url}? Its delivery log goes with it.`,
                'Delete endpoint',
                async () => {
                  await ph.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: w.id } } });
                  toast('Endpoint deleted.');
                  go('/webhooks');
                },
              );
              return h('div', { class: 'row-actions' }, test, rotate, toggle, del);
            },
          },
        ],
        endpoints,
        'No endpoints yet: add one below.',
      ),
    );
  render();
  ctx.main.append(section('Endpoints', listSlot));
  const current = endpoints.find((w) => w.id === selected);
  if (current)
    ctx.main.append(section(`Delivery log: ${current.description || current.url}`, await deliveryLog(ctx, current)));
  else if (endpoints.length > 0)
    ctx.main.append(h('p', { class: 'muted' }, 'Choose an endpoint to see its delivery log.'));
  ctx.main.append(section('New endpoint', endpointForm()));
}

type DeliveryStatus = NonNullable<Query<'/api/v1/webhooks/{id}/deliveries'>['status']>;
/** The delivery log's tabs: every attempt, or those of one status. */
const TABS: [DeliveryStatus | '', string][] = [
  ['', 'All'],
  ['failed', 'Failed'],
  ['pending', 'Pending'],
  ['succeeded', 'Succeeded'],
];
const isDeliveryStatus = (s: string): s is DeliveryStatus => TABS.some(([k]) => k !== '' && k === s);

async function deliveryLog(ctx: PageContext, w: Webhook): Promise<HTMLElement> {
  const cursor = ctx.query.get('cursor');
  const status = ctx.query.get('status') ?? '';
  const slot = h('div', { 'data-testid': 'deliveries' }, loading());
  const refresh = h('button', { type: 'button', class: 'secondary small', onclick: () => void load() }, 'Refresh');
  const load = async () => {
    try {
      const page = await ph.GET('/api/v1/webhooks/{id}/deliveries', {
        params: {
          path: { id: w.id },
          query: { cursor: cursor ?? undefined, limit: 25, status: isDeliveryStatus(status) ? status : undefined },
        },
        signal: ctx.signal,
      });
      put(
        slot,
        table(
          'Attempts, newest first',
          [
            { title: 'Queued', cell: (d: Delivery) => when(d.created_at, true) },
            { title: 'Event', cell: (d) => [h('code', null, d.event_id), h('br'), d.event_type] },
            { title: 'Attempt', class: 'num', cell: (d) => `${d.attempt}${d.trigger === 'manual' ? ' (manual)' : ''}` },
            {
              title: 'Result',
              cell: (d) => [
                badge(d.status, d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'bad' : 'muted'),
                d.response_status ? ` HTTP ${d.response_status}` : '',
                d.duration_ms !== null ? ` · ${d.duration_ms} ms` : '',
              ],
            },
            { title: 'Next attempt', cell: (d) => (d.next_attempt_at ? when(d.next_attempt_at) : '—') },
            {
              title: 'Answer',
              cell: (d) =>
                d.response_body || d.error
                  ? h(
                      'details',
                      null,
                      h('summary', null, d.error ? 'error' : 'body'),
                      h('pre', null, d.error ?? d.response_body ?? ''),
                    )
                  : '—',
            },
            {
              title: '',
              cell: (d) => {
                const again = h('button', { type: 'button', class: 'secondary small' }, 'Redeliver');
                again.addEventListener(
                  'click',
                  () =>
                    void withBusy(again, null, async () => {
                      const r = await ph.POST('/api/v1/webhooks/{id}/redeliver', {
                        params: { path: { id: w.id } },
                        body: { event_id: d.event_id },
                      });
                      toast(r.queued === 1 ? 'Queued again.' : `Queued ${r.queued} attempts.`);
                      await load();
                    }),
                );
                return again;
              },
            },
          ],
          page.data,
          'Nothing delivered yet.',
        ),
        listPager('/webhooks', { id: w.id, status: status || undefined }, cursor, page.pagination),
      );
    } catch (err) {
      if (!ctx.signal.aborted) put(slot, errorBox(err));
    }
  };
  await load();

  const err = h('div');
  const replay = h('button', { type: 'submit', class: 'secondary' }, 'Redeliver failed events in this range');
  const result = h('p', { role: 'status', 'data-testid': 'replay-result' });
  const now = new Date();
  const form = h(
    'form',
    { class: 'inline-form', novalidate: true, 'aria-label': 'Replay a range' },
    field({
      name: 'since',
      label: 'From',
      type: 'datetime-local',
      required: true,
      value: toLocalInput(new Date(now.getTime() - 86_400_000)),
    }),
    // The input has minutes only: the default end is the next minute, so that events of this one count.
    field({
      name: 'until',
      label: 'Until',
      type: 'datetime-local',
      required: true,
      value: toLocalInput(new Date(now.getTime() + 60_000)),
    }),
    h('div', { class: 'actions' }, replay),
    err,
    result,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const at = (k: string) => new Date(control(form, k)!.value).toISOString();
    void withBusy(replay, err, async () => {
      const r = await ph.POST('/api/v1/webhooks/{id}/redeliver', {
        params: { path: { id: w.id } },
        body: { since: at('since'), until: at('until') },
      });
      put(
        result,
        r.queued === 0
          ? 'No failed event in this range: nothing queued.'
          : `Queued ${r.queued} failed event${r.queued === 1 ? '' : 's'} again.`,
      );
      await load();
    });
  });
  const tabs = h(
    'nav',
    { class: 'segmented', 'aria-label': 'Which attempts' },
    TABS.map(([k, label]) =>
      h(
        'a',
        {
          href: href('/webhooks', { id: w.id, status: k || undefined }),
          'aria-current': k === status ? 'true' : undefined,
        },
        label,
      ),
    ),
  );
  return h('div', null, h('div', { class: 'toolbar' }, tabs, refresh), slot, h('h3', null, 'Replay a range'), form);
}

function endpointForm(): HTMLElement {
  const err = h('div');
  const submit = h('button', { type: 'submit' }, 'Add endpoint');
  const legendId = nextId('types');
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true, 'aria-label': 'New webhook endpoint' },
    field({
      name: 'url',
      label: 'URL',
      type: 'url',
      required: true,
      placeholder: 'https://example.com/hooks/pricehound',
    }),
    field({ name: 'description', label: 'Description', maxlength: 500 }),
    selectField({
      name: 'format',
      label: 'Format',
      options: [
        ['standard', 'Standard Webhooks (signed JSON)'],
        ['slack', 'Slack-compatible text'],
      ],
    }),
    h(
      'fieldset',
      { class: 'event-types', 'aria-labelledby': legendId },
      h('legend', { id: legendId }, 'Events (none checked: all)'),
      EVENT_TYPES.filter((t) => t !== 'webhook.test').map((t) => {
        const id = nextId('evt');
        return h(
          'div',
          { class: 'check' },
          h('input', { type: 'checkbox', id, name: 'event_types', value: t }),
          h('label', { for: id }, t),
        );
      }),
    ),
    err,
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const types = [...form.querySelectorAll<HTMLInputElement>('input[name=event_types]:checked')].map((i) => i.value);
    const description = control(form, 'description')!.value.trim();
    const body: WebhookCreate = {
      url: control(form, 'url')!.value.trim(),
      format: control(form, 'format')!.value as WebhookCreate['format'],
      event_types: types as WebhookCreate['event_types'],
    };
    if (description) body.description = description;
    void withBusy(submit, err, async () => {
      const created: WebhookWithSecret | undefined = await fieldChecked(form, () =>
        ph.POST('/api/v1/webhooks', { body }),
      );
      if (!created) return;
      go('/webhooks', { id: created.id });
      showSecret('Endpoint added: its signing secret', created.secret);
    });
  });
  return form;
}
