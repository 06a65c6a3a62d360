import { ApiError, type ErrorDetail, NetworkError, RateLimitError } from './api';
import { type Child, h, nextId, put } from './dom';
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

export function describeError(err: unknown): string {
  if (err instanceof RateLimitError) return `Rate limit reached: try again in ${err.retryAfter ?? '?'} s.`;
  if (err instanceof ApiError) return err.message;
  if (err instanceof NetworkError) return 'The service did not answer; check the connection and try again.';
  if (err instanceof DOMException && err.name === 'AbortError') return 'Cancelled.';
  return err instanceof Error ? err.message : String(err);
}

/** An error as a block: the message and, when the API named fields, each of them (or `details`: those not shown at their fields). */
export function errorBox(err: unknown, details: readonly ErrorDetail[] = err instanceof ApiError ? err.details : []): HTMLElement {
  return h(
    'div',
    { class: 'notice error', role: 'alert' },
    h('p', null, describeError(err)),
    details.length > 0 ? h('ul', null, details.map((d) => h('li', null, h('code', null, d.field), ': ', d.message))) : null,
  );
}

export const notice = (text: Child, kind: 'info' | 'warn' | 'ok' = 'info') =>
  h('div', { class: `notice ${kind}`, role: kind === 'warn' ? 'alert' : 'status' }, text);

export const badge = (text: string, kind: string) => h('span', { class: `badge ${kind}` }, text);

export const loading = (what = 'Loading…') => h('p', { class: 'muted', role: 'status', 'aria-busy': 'true' }, what);

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
    h('label', { for: id }, spec.label, spec.required ? h('span', { class: 'req', 'aria-hidden': 'true' }, ' *') : null),
    input,
    spec.hint ? h('p', { class: 'hint', id: hintId }, spec.hint) : null,
    h('p', { class: 'field-error', id: errId }),
  );
}

export function selectField(spec: { name: string; label: string; options: readonly (readonly [string, string])[]; value?: string | null; hint?: string; onchange?: (e: Event) => void }): HTMLElement {
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

export function textarea(spec: { name: string; label: string; value?: string | null; rows?: number; maxlength?: number }): HTMLElement {
  const id = nextId(spec.name);
  const errId = `${id}-err`;
  const ta = h('textarea', { id, name: spec.name, rows: spec.rows ?? 3, maxlength: spec.maxlength, 'aria-describedby': errId });
  ta.value = spec.value ?? '';
  return h('div', { class: 'field' }, h('label', { for: id }, spec.label), ta, h('p', { class: 'field-error', id: errId }));
}

type FormControl = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

export function control(form: HTMLFormElement, name: string): FormControl | null {
  const el = form.elements.namedItem(name);
  return el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement ? el : null;
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
    const errId = el.getAttribute('aria-describedby')?.split(' ').find((x) => x.endsWith('-err'));
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
    if (err instanceof ApiError && err.details.length > 0 && showFieldErrors(form, err.details).length === 0) return undefined;
    throw err;
  }
}

/** Runs `action` with the button disabled and marked busy; errors are shown in `errorSlot`. */
export async function withBusy<T>(button: HTMLButtonElement | null, errorSlot: HTMLElement | null, action: () => Promise<T>): Promise<T | undefined> {
  if (button) {
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
  }
  if (errorSlot) put(errorSlot);
  try {
    return await action();
  } catch (err) {
    if (errorSlot) put(errorSlot, errorBox(err));
    else toast(describeError(err));
    return undefined;
  } finally {
    if (button) {
      button.disabled = false;
      button.removeAttribute('aria-busy');
    }
  }
}

// ---- tables ----

export interface Column<T> {
  title: string;
  cell: (row: T) => Child;
  class?: string;
}

/** A table in a horizontally scrollable, keyboard-focusable region (phones). */
export function table<T>(caption: string, columns: readonly Column<T>[], rows: readonly T[], empty = 'Nothing here yet.'): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'muted empty' }, empty);
  const captionId = nextId('cap');
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-labelledby': captionId, tabindex: 0 },
    h(
      'table',
      null,
      h('caption', { id: captionId }, caption),
      h('thead', null, h('tr', null, columns.map((c) => h('th', { scope: 'col', class: c.class }, c.title)))),
      h('tbody', null, rows.map((r) => h('tr', null, columns.map((c) => h('td', { class: c.class }, c.cell(r)))))),
    ),
  );
}

/** The cursors of the pages seen, per list and filters: the API's cursors only go forward. */
const trails = new Map<string, string[]>();

/**
 * Pages of a list at `path` (a dashboard route) with the filters `base`: first, previous (from
 * the cursors seen) and next, each a navigation to the route with `cursor` set.
 */
export function listPager(path: string, base: Record<string, string | undefined>, cursor: string | null, pagination: { has_more: boolean; next_cursor: string | null }): HTMLElement {
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
    h('button', { type: 'button', class: 'secondary', disabled: !cursor, onclick: () => go(path, { ...base, cursor: idx > 0 ? seen[idx - 1] : undefined }) }, '‹ Previous'),
    h('button', { type: 'button', class: 'secondary', disabled: !pagination.has_more, onclick: next }, 'Next ›'),
  );
}

// ---- dialogs ----

/**
 * A modal dialog (the native <dialog>: focus moves in, Escape closes, the page behind is inert).
 * Focus returns to what had it. Never window.confirm: a page-level dialog blocks the tab.
 */
export function modal(title: string, body: Child, opts: { onClose?: () => void } = {}): { dialog: HTMLDialogElement; close: () => void } {
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
    const yes = h('button', { type: 'button', class: 'danger', onclick: () => ((answer = true), close()) }, confirmLabel);
    const { close } = modal(
      'Please confirm',
      h('div', null, h('p', null, question), h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', onclick: () => close() }, 'Cancel'), yes)),
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
  const { close } = modal(title, h('div', null, explanation, out, h('div', { class: 'actions' }, copy, h('button', { type: 'button', onclick: () => close() }, 'Done'))));
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

export const POSITION_WORDS = { cheap: 'cheapest', middle: 'in between', expensive: 'most expensive', none: 'not compared' } as const;
