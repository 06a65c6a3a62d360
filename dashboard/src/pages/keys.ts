import { ApiError, ph, take } from '../api';
import { h, put } from '../dom';
import { relative, when } from '../format';
import { type PageContext, pageHeader } from '../page';
import {
  type ApiKey,
  type ApiKeyCreate,
  type ApiKeyWithSecret,
  type KeyScope,
  type Plan,
  PLAN_ORDER,
  type Usage,
} from '../types';
import {
  badge,
  clearErrors,
  confirmDialog,
  control,
  field,
  fieldChecked,
  modal,
  notice,
  secretDialog,
  section,
  selectField,
  table,
  toast,
  withBusy,
} from '../ui';

/**
 * The account's API keys (docs/KEYS.md): list, create (the secret shown once), rename, revoke,
 * with the signed-in key. Only a full key manages keys; the choosers offer only what it may give:
 * both scopes, and plans up to its own.
 */
export async function keysPage(ctx: PageContext): Promise<void> {
  pageHeader(ctx, 'API keys');
  // The signed-in key: its id and plan (GET /usage is never counted against the limit).
  const me: Usage = await ph.GET('/api/v1/usage', { params: { query: { hours: 1 } }, signal: ctx.signal });
  let keys: ApiKey[];
  try {
    keys = await take(ph.paginate('/api/v1/keys', { signal: ctx.signal }), 1000);
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'insufficient_scope') throw err;
    ctx.main.append(
      notice(
        h(
          'p',
          { 'data-testid': 'keys-read-scope' },
          'You are signed in with a read key: it can look at everything but change nothing, and only full keys manage API keys. Sign in with a full key to list, create or revoke keys.',
        ),
        'info',
      ),
    );
    return;
  }

  const listSlot = h('div', { class: 'keys-table', 'data-testid': 'keys-list' });
  // A refused revocation (the last full key) stays said here, beside the list, not in a passing toast.
  const actionError = h('div');
  const reload = async () => {
    keys = await take(ph.paginate('/api/v1/keys', { signal: ctx.signal }), 1000);
    render();
  };
  const render = () =>
    put(
      listSlot,
      table(
        'Keys of this account, newest first',
        [
          {
            title: 'Name',
            cell: (k: ApiKey) => [
              k.name ?? h('span', { class: 'muted' }, '(no name)'),
              k.id === me.key_id ? [' ', badge('this key', 'muted')] : null,
              h('br'),
              h('code', { class: 'muted' }, k.id),
            ],
          },
          { title: 'Scope', cell: (k) => (k.scope === 'full' ? badge('full', 'ok') : badge('read', 'muted')) },
          { title: 'Plan', cell: (k) => k.plan },
          { title: 'Prefix', cell: (k) => h('code', { class: 'nowrap' }, `${k.prefix}…`) },
          { title: 'Created', cell: (k) => when(k.created_at) },
          {
            title: 'Last used',
            cell: (k) =>
              k.last_used_at ? h('span', { title: when(k.last_used_at, true) }, relative(k.last_used_at)) : 'never',
          },
          {
            title: 'State',
            cell: (k) => (k.revoked_at ? [badge('revoked', 'bad'), ' ', when(k.revoked_at)] : badge('active', 'ok')),
          },
          { title: 'Actions', cell: (k) => actions(k) },
        ],
        keys,
        'No keys.',
      ),
    );

  const actions = (k: ApiKey) => {
    const label = k.name ?? `the key ${k.prefix}…`;
    const rename = h('button', { type: 'button', class: 'secondary small', 'aria-label': `Rename ${label}` }, 'Rename');
    rename.addEventListener('click', () =>
      renameDialog(k, (updated) => {
        keys = keys.map((x) => (x.id === updated.id ? updated : x));
        render();
      }),
    );
    if (k.revoked_at) return h('div', { class: 'row-actions' }, rename);
    const revoke = h('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke ${label}` }, 'Revoke');
    revoke.addEventListener(
      'click',
      () =>
        void (async () => {
          const self = k.id === me.key_id;
          const question = self
            ? `Revoke the key you are signed in with (${k.prefix}…)? Programs using it stop working at once, and you will be signed out.`
            : `Revoke ${k.name ? `"${k.name}"` : 'this key'} (${k.prefix}…)? Programs using it stop working at once. This cannot be undone.`;
          if (!(await confirmDialog(question, 'Revoke key'))) return;
          await withBusy(revoke, actionError, async () => {
            await ph.DELETE('/api/v1/keys/{id}', { params: { path: { id: k.id } } });
            toast('Key revoked.');
            // Revoking the signed-in key: the next request answers 401, which signs out (api.ts).
            await reload();
          });
        })(),
    );
    return h('div', { class: 'row-actions' }, rename, revoke);
  };

  render();
  ctx.main.append(
    section('Keys', actionError, listSlot),
    section(
      'New key',
      createForm(me.plan, () => void reload()),
    ),
  );
}

/** The plans the signed-in key may give: its own and those below. */
const plansUpTo = (own: Plan) => PLAN_ORDER.slice(0, PLAN_ORDER.indexOf(own as (typeof PLAN_ORDER)[number]) + 1);

function createForm(own: Plan, created: () => void): HTMLElement {
  const err = h('div');
  const submit = h('button', { type: 'submit' }, 'Create key');
  const scopes: [KeyScope, string][] = [
    ['read', 'read'],
    ['full', 'full'],
  ];
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true, 'aria-label': 'New API key' },
    field({
      name: 'name',
      label: 'Name',
      maxlength: 200,
      placeholder: 'Grafana (read)',
      hint: 'Optional: what uses the key.',
    }),
    selectField({
      name: 'scope',
      label: 'Scope',
      options: scopes,
      value: 'read',
      hint: 'Read: look, never change. Full: everything, keys included.',
    }),
    selectField({
      name: 'plan',
      label: 'Plan',
      options: plansUpTo(own).map((p) => [p, p === own ? `${p} (this key's)` : p] as const),
      value: own,
      hint: `Up to this key's plan, ${own}.`,
    }),
    err,
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const name = control(form, 'name')!.value.trim();
    const body: ApiKeyCreate = {
      scope: control(form, 'scope')!.value as KeyScope,
      plan: control(form, 'plan')!.value as Plan,
    };
    if (name) body.name = name;
    void withBusy(submit, err, async () => {
      const key: ApiKeyWithSecret | undefined = await fieldChecked(form, () => ph.POST('/api/v1/keys', { body }));
      if (!key) return;
      form.reset();
      created();
      secretDialog(
        `Key created: ${key.name ?? key.prefix}`,
        key.secret,
        h(
          'div',
          null,
          h(
            'p',
            { class: 'notice warn', role: 'alert' },
            h('strong', null, 'Copy this key now: you will not see it again.'),
            ' Only its hash is kept, so neither the dashboard nor the API can show it later.',
          ),
          h(
            'p',
            null,
            `Scope ${key.scope}, plan ${key.plan}. Send it as `,
            h('code', null, 'Authorization: Bearer <key>'),
            '.',
          ),
        ),
        'new-key-secret',
      );
    });
  });
  return form;
}

function renameDialog(k: ApiKey, renamed: (k: ApiKey) => void): void {
  const err = h('div');
  const save = h('button', { type: 'submit' }, 'Save');
  const form = h(
    'form',
    { novalidate: true, 'aria-label': 'Rename key' },
    field({ name: 'name', label: 'Name', value: k.name, maxlength: 200, hint: 'Empty: no name.' }),
    err,
    h('div', { class: 'actions' }, save),
  );
  const { close } = modal(`Rename ${k.prefix}…`, form);
  control(form, 'name')?.focus();
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const name = control(form, 'name')!.value.trim();
    void withBusy(save, err, async () => {
      const updated: ApiKey | undefined = await fieldChecked(form, () =>
        ph.PATCH('/api/v1/keys/{id}', { params: { path: { id: k.id } }, body: { name: name || null } }),
      );
      if (!updated) return;
      close();
      toast('Key renamed.');
      renamed(updated);
    });
  });
}
