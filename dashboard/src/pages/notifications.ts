import { type components, EVENT_TYPES } from '@pricehound/client';
import { ph, take } from '../api';
import { h, nextId, put } from '../dom';
import { when } from '../format';
import { type PageContext, pageHeader } from '../page';
import { go, href } from '../router';
import {
  badge,
  clearErrors,
  deleteButton,
  enableToggle,
  control,
  field,
  fieldChecked,
  section,
  selectField,
  table,
  toast,
  withBusy,
} from '../ui';

/**
 * Notifications: the account's email subscriptions (docs/EMAIL.md). Listed with their state,
 * created (a code is mailed), confirmed with the code, their digest and time zone edited,
 * enabled, disabled and deleted, all through the typed client.
 */

type Subscription = components['schemas']['EmailSubscription'];
type SubscriptionCreate = components['schemas']['EmailSubscriptionCreate'];
type Digest = Subscription['digest'];

const DIGESTS: [Digest, string][] = [
  ['none', 'Each minute'],
  ['daily', 'Daily digest'],
  ['weekly', 'Weekly (Mondays)'],
];
const HOURS: [string, string][] = Array.from({ length: 24 }, (_, i) => [String(i), `${String(i).padStart(2, '0')}:00`]);

const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const delivery = (s: Subscription) =>
  s.digest === 'none' ? 'each minute' : `${s.digest} at ${String(s.digest_hour).padStart(2, '0')}:00 ${s.time_zone}`;

const state = (s: Subscription) =>
  !s.confirmed_at ? badge('awaiting code', 'warn') : s.enabled ? badge('active', 'ok') : badge('disabled', 'bad');

export async function notificationsPage(ctx: PageContext): Promise<void> {
  pageHeader(ctx, 'Notifications');
  ctx.main.append(
    h(
      'p',
      { class: 'muted' },
      "Email the account's events to an address: a mail per minute, or a daily or weekly digest. Nothing but a 6-digit code is sent until the address is confirmed.",
    ),
  );
  let subs = await take(ph.paginate('/api/v1/email-subscriptions', { signal: ctx.signal }), 500);
  const selected = ctx.query.get('id');
  const listSlot = h('div', { 'data-testid': 'subscriptions' });
  const render = () =>
    put(
      listSlot,
      table(
        'Addresses',
        [
          {
            title: 'Address',
            cell: (s: Subscription) =>
              h(
                'a',
                { href: href('/notifications', { id: s.id }), 'aria-current': s.id === selected ? 'true' : undefined },
                s.address,
              ),
          },
          {
            title: 'Events',
            cell: (s) =>
              s.digest !== 'none'
                ? 'alerts, price changes, failing listings'
                : s.event_types.length === 0
                  ? 'all'
                  : s.event_types.join(', '),
          },
          { title: 'Delivery', cell: (s) => delivery(s) },
          { title: 'State', cell: (s) => state(s) },
          { title: 'Since', cell: (s) => when(s.created_at) },
          {
            title: 'Actions',
            cell: (s) => {
              const edit = h(
                'a',
                { class: 'button secondary small', href: href('/notifications', { id: s.id }) },
                s.confirmed_at ? 'Edit' : 'Confirm',
              );
              const toggle = enableToggle(
                s.enabled,
                (enabled) =>
                  ph.PATCH('/api/v1/email-subscriptions/{id}', { params: { path: { id: s.id } }, body: { enabled } }),
                (u) => {
                  subs = subs.map((x) => (x.id === s.id ? u : x));
                  render();
                },
              );
              const del = deleteButton(
                `Delete the subscription of ${s.address}? Nothing more is mailed to it.`,
                'Delete subscription',
                async () => {
                  await ph.DELETE('/api/v1/email-subscriptions/{id}', { params: { path: { id: s.id } } });
                  toast('Subscription deleted.');
                  go('/notifications');
                },
              );
              return h('div', { class: 'row-actions' }, edit, toggle, del);
            },
          },
        ],
        subs,
        'No subscriptions yet: add an address below.',
      ),
    );
  render();
  ctx.main.append(section('Email subscriptions', listSlot));
  const current = subs.find((s) => s.id === selected);
  if (current) {
    if (!current.confirmed_at) ctx.main.append(section(`Confirm ${current.address}`, confirmForm(current)));
    ctx.main.append(section(`Settings of ${current.address}`, settingsForm(current)));
  }
  ctx.main.append(section('New subscription', createForm()));
}

function confirmForm(s: Subscription): HTMLElement {
  const err = h('div');
  const submit = h('button', { type: 'submit' }, 'Confirm');
  const form = h(
    'form',
    { class: 'inline-form', novalidate: true, 'aria-label': 'Confirm with the code' },
    field({
      name: 'code',
      label: 'Code from the mail',
      required: true,
      inputmode: 'numeric',
      autocomplete: 'one-time-code',
      maxlength: 6,
      pattern: '[0-9]{6}',
      hint: 'The 6 digits mailed to the address. Five wrong codes and the subscription must be created again.',
    }),
    h('div', { class: 'actions' }, submit),
    err,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const code = control(form, 'code')!.value.trim();
    void withBusy(submit, err, async () => {
      const done = await fieldChecked(form, () =>
        ph.POST('/api/v1/email-subscriptions/{id}/confirm', { params: { path: { id: s.id } }, body: { code } }),
      );
      if (!done) return;
      toast(`${done.address} confirmed.`);
      go('/notifications', { id: s.id });
    });
  });
  return form;
}

function digestFields(s?: Subscription): HTMLElement[] {
  return [
    selectField({ name: 'digest', label: 'Delivery', options: DIGESTS, value: s?.digest ?? 'none' }),
    selectField({
      name: 'digest_hour',
      label: 'Digest hour',
      options: HOURS,
      value: String(s?.digest_hour ?? 8),
      hint: 'For daily and weekly digests, in the time zone below.',
    }),
    field({
      name: 'time_zone',
      label: 'Time zone',
      required: true,
      value: s?.time_zone ?? browserZone(),
      placeholder: 'Europe/Berlin',
      hint: 'An IANA time zone name.',
    }),
  ];
}

function settingsForm(s: Subscription): HTMLElement {
  const err = h('div');
  const submit = h('button', { type: 'submit' }, 'Save');
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true, 'aria-label': 'Subscription settings' },
    ...digestFields(s),
    err,
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const body = {
      digest: control(form, 'digest')!.value as Digest,
      digest_hour: Number(control(form, 'digest_hour')!.value),
      time_zone: control(form, 'time_zone')!.value.trim(),
    };
    void withBusy(submit, err, async () => {
      const saved = await fieldChecked(form, () =>
        ph.PATCH('/api/v1/email-subscriptions/{id}', { params: { path: { id: s.id } }, body }),
      );
      if (!saved) return;
      toast('Saved.');
      go('/notifications', { id: s.id });
    });
  });
  return form;
}

function createForm(): HTMLElement {
  const err = h('div');
  const submit = h('button', { type: 'submit' }, 'Add address');
  const legendId = nextId('types');
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true, 'aria-label': 'New email subscription' },
    field({
      name: 'address',
      label: 'Address',
      type: 'email',
      required: true,
      placeholder: 'you@example.com',
      maxlength: 254,
    }),
    h(
      'fieldset',
      { class: 'event-types', 'aria-labelledby': legendId },
      h('legend', { id: legendId }, 'Events mailed each minute (none checked: all)'),
      EVENT_TYPES.filter((t) => t !== 'webhook.test').map((t) => {
        const id = nextId('evt');
        return h(
          'div',
          { class: 'check' },
          h('input', { type: 'checkbox', id, name: 'event_types', value: t, checked: t === 'alert.triggered' }),
          h('label', { for: id }, t),
        );
      }),
    ),
    ...digestFields(),
    err,
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const types = [...form.querySelectorAll<HTMLInputElement>('input[name=event_types]:checked')].map((i) => i.value);
    const body: SubscriptionCreate = {
      address: control(form, 'address')!.value.trim(),
      event_types: types as SubscriptionCreate['event_types'],
      digest: control(form, 'digest')!.value as Digest,
      digest_hour: Number(control(form, 'digest_hour')!.value),
      time_zone: control(form, 'time_zone')!.value.trim(),
    };
    void withBusy(submit, err, async () => {
      const created = await fieldChecked(form, () => ph.POST('/api/v1/email-subscriptions', { body }));
      if (!created) return;
      toast(`A code is on its way to ${created.address}.`);
      go('/notifications', { id: created.id });
    });
  });
  return form;
}
