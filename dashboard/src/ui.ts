import { ApiError, type ErrorDetail, NetworkError, RateLimitError } from './api';
import { type Child, h, nextId, put } from './dom';
import { clock, countdown } from './format';
import { go } from './router';

/** Small building blocks every page shares: fields with labels, tables, pagers, dialogs, notices. */

/** The page-wide live region: short confirmations ("Product saved") for screen readers and eyes. */
let statusRegion: HTMLElement | null = null;
export function statusRegionEl(): HTMLElement {
  statusRegion ??= h('div', { class: 'toast', role: 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });
  return statusRegion;
}
let toastTimer: number | undefined;
export function toast(text: string): void {
  const el = statusRegionEl();
  put(el, text);
  el.classList.add('show');
  window.clearTimeout(toastTimer);
  toastTimer = window.setTimeout(() => el.classList.remove('show'), 4000);
}

/** When a 429's window resets, as a time of day and a countdown ("14:00, in 12:30"). */
function resetsAt(err: RateLimitError): string {
  const at =
    err.reset !== undefined
      ? err.reset * 1000
      : err.retryAfter !== undefined
        ? Date.now() + err.retryAfter * 1000
        : undefined;
  if (at === undefined) return 'at the start of the next hour';
  return `at ${clock(new Date(at))} (in ${countdown((at - Date.now()) / 1000)})`;
}

export function describeError(err: unknown): string {
  if (err instanceof RateLimitError)
    return `This key's requests for the hour are used up. The limit resets ${resetsAt(err)}.`;
  if (err instanceof ApiError) return err.message;
  if (err instanceof NetworkError) return 'The service did not answer; check the connection and try again.';
  if (err instanceof DOMException && err.name === 'AbortError') return 'Cancelled.';
  return err instanceof Error ? err.message : String(err);
}

export interface ErrorBoxOptions {
  /** Field errors to list (default: the API's `details`). */
  details?: readonly ErrorDetail[];
  /** Offers "Try again", which runs this; by default it loads the page again; `false`: no retry (a form's submit button is there to press again). */
  retry?: (() => unknown) | false;
}

/** Loads the page shown again (the router renders it anew). */
export const reloadPage = () => window.dispatchEvent(new HashChangeEvent('hashchange'));

/**
 * An error as a block: the message, the API's `details` (or those not shown at their fields),
 * the request id to quote when asking about it, and "Try again" when the caller can. A 429 is
 * the "limited" state: what happened and when the window resets, never a bare failure.
 */
export function errorBox(err: unknown, opts: ErrorBoxOptions | readonly ErrorDetail[] = {}): HTMLElement {
  const o: ErrorBoxOptions = Array.isArray(opts)
    ? { details: opts as readonly ErrorDetail[], retry: false }
    : (opts as ErrorBoxOptions);
  const retryFn = o.retry === false ? null : (o.retry ?? reloadPage);
  const details = o.details ?? (err instanceof ApiError ? err.details : []);
  const limited = err instanceof RateLimitError;
  const requestId = err instanceof ApiError ? err.requestId : undefined;
  // A refusal of what was sent (4xx other than 429) is not fixed by sending it again.
  const transient = !(err instanceof ApiError) || err.status === 429 || err.status >= 500 || err.status === 408;
  const retry =
    retryFn && transient
      ? h(
          'button',
          { type: 'button', class: 'secondary small', 'data-testid': 'retry', onclick: () => void retryFn() },
          'Try again',
        )
      : null;
  return h(
    'div',
    { class: `notice ${limited ? 'warn' : 'error'}`, role: 'alert', 'data-state': limited ? 'limited' : 'failed' },
    h('p', null, describeError(err)),
    details.length > 0
      ? h(
          'ul',
          null,
          details.map((d) => h('li', null, h('code', null, d.field), ': ', d.message)),
        )
      : null,
    requestId
      ? h(
          'p',
          { class: 'request-id' },
          'Request id ',
          h('code', { 'data-testid': 'request-id' }, requestId),
          ' (quote it when asking about this).',
        )
      : null,
    retry ? h('p', { class: 'row-actions' }, retry) : null,
  );
}

/** A list with nothing in it yet: says so, and what to do. */
export const emptyState = (text: Child) => h('p', { class: 'muted empty', 'data-state': 'empty' }, text);

export const notice = (text: Child, kind: 'info' | 'warn' | 'ok' = 'info') =>
  h('div', { class: `notice ${kind}`, role: kind === 'warn' ? 'alert' : 'status' }, text);

export const badge = (text: string, kind: string) => h('span', { class: `badge ${kind}` }, text);

export const loading = (what = 'Loading…') =>
  h('p', { class: 'muted loading', role: 'status', 'aria-busy': 'true', 'data-state': 'loading' }, what);

/**
 * Fills `slot` from `load`: the loading state first, then what `render` makes of the answer, or
 * the failed / limited state with "Try again" (which runs it all again). Errors after the user
 * left the page (its signal aborted) are dropped.
 */
export async function loadInto<T>(
  slot: HTMLElement,
  signal: AbortSignal,
  load: () => Promise<T>,
  render: (value: T) => Child,
  what?: string,
): Promise<void> {
  const run = async (): Promise<void> => {
    put(slot, loading(what));
    let value: T;
    try {
      value = await load();
    } catch (err) {
      if (!signal.aborted) put(slot, errorBox(err, { retry: run }));
      return;
    }
    if (!signal.aborted) put(slot, render(value));
  };
  await run();
}

// ---- form fields ----

export interface FieldSpec {
  name: string;
  label: string;
  type?: string;
  value?: string | number | null | undefined;
  required?: boolean;
  hint?: string;
  placeholder?: string;
  step?: string;
  min?: string;
  max?: string;
  maxlength?: number;
  autocomplete?: string;
  pattern?: string;
  inputmode?: string;
}

/** A labelled input with room for its hint and its error, wired with aria-describedby. */
export function field(spec: FieldSpec): HTMLElement {
  const id = nextId(spec.name);
  const hintId = spec.hint ? `${id}-hint` : undefined;
  const errId = `${id}-err`;
  const input = h('input', {
    id,
    name: spec.name,
    type: spec.type ?? 'text',
    value: spec.value === null || spec.value === undefined ? '' : String(spec.value),
    required: spec.required,
    placeholder: spec.placeholder,
    step: spec.step,
    min: spec.min,
    max: spec.max,
    maxlength: spec.maxlength,
    autocomplete: spec.autocomplete ?? 'off',
    pattern: spec.pattern,
    inputmode: spec.inputmode,
    'aria-describedby': [hintId, errId].filter(Boolean).join(' '),
  });
  return h(
    'div',
    { class: 'field' },
    h(
      'label',
      { for: id },
      spec.label,
      spec.required ? h('span', { class: 'req', 'aria-hidden': 'true' }, ' *') : null,
    ),
    input,
    spec.hint ? h('p', { class: 'hint', id: hintId }, spec.hint) : null,
    h('p', { class: 'field-error', id: errId }),
  );
}

export function selectField(spec: {
  name: string;
  label: string;
  options: readonly (readonly [string, string])[];
  value?: string | null;
  hint?: string;
  onchange?: (e: Event) => void;
}): HTMLElement {
  const id = nextId(spec.name);
  const errId = `${id}-err`;
  const hintId = spec.hint ? `${id}-hint` : undefined;
  const select = h(
    'select',
    { id, name: spec.name, onchange: spec.onchange, 'aria-describedby': [hintId, errId].filter(Boolean).join(' ') },
    spec.options.map(([value, text]) => h('option', { value, selected: value === (spec.value ?? '') }, text)),
  );
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, spec.label),
    select,
    spec.hint ? h('p', { class: 'hint', id: hintId }, spec.hint) : null,
    h('p', { class: 'field-error', id: errId }),
  );
}

export function checkbox(spec: { name: string; label: string; checked?: boolean; hint?: string }): HTMLElement {
  const id = nextId(spec.name);
  return h(
    'div',
    { class: 'field check' },
    h('input', { id, name: spec.name, type: 'checkbox', checked: spec.checked ?? false }),
    h('label', { for: id }, spec.label),
    spec.hint ? h('p', { class: 'hint' }, spec.hint) : null,
  );
}

export function textarea(spec: {
  name: string;
  label: string;
  value?: string | null;
  rows?: number;
  maxlength?: number;
}): HTMLElement {
  const id = nextId(spec.name);
  const errId = `${id}-err`;
  const ta = h('textarea', {
    id,
    name: spec.name,
    rows: spec.rows ?? 3,
    maxlength: spec.maxlength,
    'aria-describedby': errId,
  });
  ta.value = spec.value ?? '';
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, spec.label),
    ta,
    h('p', { class: 'field-error', id: errId }),
  );
}

type FormControl = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

export function control(form: HTMLFormElement, name: string): FormControl | null {
  const el = form.elements.namedItem(name);
  return el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement
    ? el
    : null;
}

/** Clears every field error of the form. */
export function clearErrors(form: HTMLFormElement): void {
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  for (const el of form.querySelectorAll('.field-error')) el.textContent = '';
}

/**
 * Shows the API's `details` next to the fields they name and focuses the first; details naming
 * no field of the form are returned for the form-level message.
 */
export function showFieldErrors(form: HTMLFormElement, details: readonly ErrorDetail[]): ErrorDetail[] {
  const rest: ErrorDetail[] = [];
  let first: FormControl | null = null;
  for (const d of details) {
    const name = d.field.replace(/^(body|products\[\d+\])\./, '');
    const el = control(form, name);
    if (!el) {
      rest.push(d);
      continue;
    }
    el.setAttribute('aria-invalid', 'true');
    const errId = el
      .getAttribute('aria-describedby')
      ?.split(' ')
      .find((x) => x.endsWith('-err'));
    const errEl = errId ? document.getElementById(errId) : null;
    if (errEl) errEl.textContent = d.message;
    first ??= el;
  }
  first?.focus();
  return rest;
}

/**
 * Sends a form's request: a refusal whose `details` all name fields of the form is shown at those
 * fields and resolves to undefined; any other error is thrown (to `withBusy`'s error slot).
 */
export async function fieldChecked<T>(form: HTMLFormElement, call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof ApiError && err.details.length > 0 && showFieldErrors(form, err.details).length === 0)
      return undefined;
    throw err;
  }
}

/** Runs `action` with the button disabled and marked busy; errors are shown in `errorSlot`. */
export async function withBusy<T>(
  button: HTMLButtonElement | null,
  errorSlot: HTMLElement | null,
  action: () => Promise<T>,
): Promise<T | undefined> {
  if (button) {
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
  }
  if (errorSlot) put(errorSlot);
  try {
    return await action();
  } catch (err) {
    if (errorSlot) put(errorSlot, errorBox(err, { retry: false }));
    else toast(describeError(err));
    return undefined;
  } finally {
    if (button) {
      button.disabled = false;
      button.removeAttribute('aria-busy');
    }
  }
}

/** A row's Enable/Disable button: sends the opposite of `enabled`, then hands the answer on. */
export function enableToggle<T>(enabled: boolean, patch: (enabled: boolean) => Promise<T>, done: (updated: T) => void) {
  const button = h('button', { type: 'button', class: 'secondary small' }, enabled ? 'Disable' : 'Enable');
  button.addEventListener('click', () => void withBusy(button, null, async () => done(await patch(!enabled))));
  return button;
}

/** A row's Delete button: asks `question` first, then removes and says so. */
export function deleteButton(question: string, confirmLabel: string, remove: () => Promise<void>) {
  const button = h('button', { type: 'button', class: 'danger small' }, 'Delete');
  button.addEventListener(
    'click',
    () =>
      void (async () => {
        if (await confirmDialog(question, confirmLabel)) await withBusy(button, null, remove);
      })(),
  );
  return button;
}

// ---- tables ----

export interface Column<T> {
  title: string;
  cell: (row: T) => Child;
  class?: string;
}

/** A table in a horizontally scrollable, keyboard-focusable region; on a phone its rows become cards (styles.css). */
export function table<T>(
  caption: string,
  columns: readonly Column<T>[],
  rows: readonly T[],
  empty = 'Nothing here yet.',
): HTMLElement {
  if (rows.length === 0) return emptyState(empty);
  const captionId = nextId('cap');
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-labelledby': captionId, tabindex: 0 },
    h(
      'table',
      null,
      h('caption', { id: captionId }, caption),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          columns.map((c) => h('th', { scope: 'col', class: c.class }, c.title)),
        ),
      ),
      // Each cell names its column: on a phone the rows become cards, each cell under its label.
      h(
        'tbody',
        null,
        rows.map((r) =>
          h(
            'tr',
            null,
            columns.map((c) =>
              h('td', { class: c.class, 'data-label': c.title || undefined }, h('span', { class: 'cell' }, c.cell(r))),
            ),
          ),
        ),
      ),
    ),
  );
}

/** The cursors of the pages seen, per list and filters: the API's cursors only go forward. */
const trails = new Map<string, string[]>();

/**
 * Pages of a list at `path` (a dashboard route) with the filters `base`: first, previous (from
 * the cursors seen) and next, each a navigation to the route with `cursor` set.
 */
export function listPager(
  path: string,
  base: Record<string, string | undefined>,
  cursor: string | null,
  pagination: { has_more: boolean; next_cursor: string | null },
): HTMLElement {
  const key = `${path}?${JSON.stringify(base)}`;
  const seen = trails.get(key) ?? [];
  trails.set(key, seen);
  const idx = cursor ? seen.indexOf(cursor) : -1;
  const next = () => {
    const c = pagination.next_cursor!;
    if (!seen.includes(c)) seen.splice(idx + 1, seen.length, c);
    go(path, { ...base, cursor: c });
  };
  return h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    h('button', { type: 'button', class: 'secondary', disabled: !cursor, onclick: () => go(path, base) }, 'First'),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        disabled: !cursor,
        onclick: () => go(path, { ...base, cursor: idx > 0 ? seen[idx - 1] : undefined }),
      },
      '‹ Previous',
    ),
    h('button', { type: 'button', class: 'secondary', disabled: !pagination.has_more, onclick: next }, 'Next ›'),
  );
}

// ---- dialogs ----

/**
 * A modal dialog (the native <dialog>: focus moves in, Escape closes, the page behind is inert).
 * Focus returns to what had it. Never window.confirm: a page-level dialog blocks the tab.
 */
export function modal(
  title: string,
  body: Child,
  opts: { onClose?: () => void } = {},
): { dialog: HTMLDialogElement; close: () => void } {
  const titleId = nextId('dlg');
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const dialog = h(
    'dialog',
    { 'aria-labelledby': titleId },
    h(
      'div',
      { class: 'dialog-head' },
      h('h2', { id: titleId }, title),
      h('button', { type: 'button', class: 'icon', 'aria-label': 'Close', onclick: () => close() }, '×'),
    ),
    body,
  );
  const close = () => {
    if (dialog.open) dialog.close();
  };
  dialog.addEventListener('close', () => {
    dialog.remove();
    opts.onClose?.();
    opener?.focus();
  });
  document.body.appendChild(dialog);
  dialog.showModal();
  return { dialog, close };
}

/** Asks before something that cannot be undone; resolves true on the confirming button. */
export function confirmDialog(question: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    let answer = false;
    const yes = h(
      'button',
      { type: 'button', class: 'danger', onclick: () => ((answer = true), close()) },
      confirmLabel,
    );
    const { close } = modal(
      'Please confirm',
      h(
        'div',
        null,
        h('p', null, question),
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'button', class: 'secondary', onclick: () => close() }, 'Cancel'),
          yes,
        ),
      ),
      { onClose: () => resolve(answer) },
    );
    yes.focus();
  });
}

/**
 * A secret shown once (a webhook's signing secret, a new API key): in a dialog, with a copy
 * button and what to do with it; the page keeps no copy once the dialog closes.
 */
export function secretDialog(title: string, secret: string, explanation: Child, testId: string): void {
  const out = h('output', { class: 'secret', 'data-testid': testId }, secret);
  const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy');
  copy.addEventListener('click', () => {
    void navigator.clipboard?.writeText(secret).then(
      () => toast('Copied.'),
      () => toast('Could not copy: select the text instead.'),
    );
  });
  const { close } = modal(
    title,
    h(
      'div',
      null,
      explanation,
      out,
      h('div', { class: 'actions' }, copy, h('button', { type: 'button', onclick: () => close() }, 'Done')),
    ),
  );
}

/** A section with a heading (h2) and its content. */
export const section = (title: string, ...content: Child[]) => {
  const id = nextId('sec');
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), ...content);
};

/** Position colour: cheapest (rank 1), dearest (everyone compared is cheaper) or in between. */
export function positionClass(rank: number | null, compared: number): 'cheap' | 'middle' | 'expensive' | 'none' {
  if (rank === null || compared === 0) return 'none';
  if (rank === 1) return 'cheap';
  if (rank > compared) return 'expensive';
  return 'middle';
}

export const POSITION_WORDS = {
  cheap: 'cheapest',
  middle: 'in between',
  expensive: 'most expensive',
  none: 'not compared',
} as const;

/** Whether the screen is phone-narrow (the stylesheet's 640 px breakpoint). */
export const narrow = () => window.matchMedia('(max-width: 640px)').matches;

/**
 * Filters that fold away: a <details> whose summary says how many are set, open on wide screens
 * and on phones closed (the list comes first), one tap to open.
 */
export function fold(title: string, active: number, content: Child): HTMLDetailsElement {
  return h(
    'details',
    { class: 'fold', open: !narrow(), 'data-testid': 'filters-fold' },
    h('summary', null, title, active > 0 ? h('span', { class: 'muted' }, ` (${active} set)`) : null),
    content,
  );
}
