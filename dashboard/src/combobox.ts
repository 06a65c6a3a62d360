import { ApiError, ph } from './api';
import { h, nextId, put } from './dom';
import { describeError } from './ui';

/**
 * Pick, don't paste: a chooser of one product or competitor that searches the whole catalogue
 * as you type (GET /products?q= or GET /competitors?q=, a request per pause in typing, the
 * older answer dropped), in the WAI-ARIA combobox pattern (an input with a listbox popup:
 * Down/Up move, Enter picks, Escape closes, the active option announced through
 * aria-activedescendant). The chosen id is kept in a hidden input named `name`, so a form reads
 * it like any field. What was typed but not picked is never an id: leaving the field with text
 * that names nothing picked says so and keeps the field invalid, and an empty field is the
 * explicit "any" (`anyLabel`), never a silent fallback.
 */

export type EntityKind = 'product' | 'competitor';

export interface Option {
  id: string;
  label: string;
  /** The SKU and currency of a product, the domain of a competitor. */
  note?: string;
}

export interface Combobox {
  el: HTMLElement;
  /** The chosen id, or '' for none ("any"). */
  value(): string;
  /** Sets the choice (a page that pre-fills one). */
  set(option: Option | null): void;
  /** True when text was typed but nothing picked for it (the form must not send). */
  unresolved(): boolean;
}

const SEARCH_DELAY_MS = 200;
const RESULTS = 10;

async function search(kind: EntityKind, q: string, signal: AbortSignal): Promise<{ options: Option[]; more: boolean }> {
  const query = { q: q || undefined, limit: RESULTS };
  if (kind === 'product') {
    const page = await ph.GET('/api/v1/products', { params: { query: { ...query, sort: 'name' } }, signal });
    return {
      options: page.data.map((p) => ({
        id: p.id,
        label: p.name,
        note: [p.sku, p.currency].filter(Boolean).join(' · '),
      })),
      more: page.pagination.has_more,
    };
  }
  const page = await ph.GET('/api/v1/competitors', { params: { query }, signal });
  return {
    options: page.data.map((c) => ({ id: c.id, label: c.name, note: c.domain ?? undefined })),
    more: page.pagination.has_more,
  };
}

/** Resolves an id given in the address (`#/alerts?product_id=...`) to its option; null when it names nothing of this account. */
export async function optionFor(kind: EntityKind, id: string, signal?: AbortSignal): Promise<Option | null> {
  try {
    if (kind === 'product') {
      const p = await ph.GET('/api/v1/products/{id}', { params: { path: { id } }, signal });
      return { id: p.id, label: p.name, note: [p.sku, p.currency].filter(Boolean).join(' · ') };
    }
    const c = await ph.GET('/api/v1/competitors/{id}', { params: { path: { id } }, signal });
    return { id: c.id, label: c.name, note: c.domain ?? undefined };
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 422)) return null;
    throw err;
  }
}

export function combobox(spec: {
  kind: EntityKind;
  name: string;
  label: string;
  anyLabel?: string;
  hint?: string;
  value?: Option | null;
  required?: boolean;
}): Combobox {
  const id = nextId(spec.name);
  const listId = `${id}-list`;
  const hintId = `${id}-hint`;
  const errId = `${id}-err`;
  const statusId = `${id}-status`;
  let chosen: Option | null = spec.value ?? null;
  let options: Option[] = [];
  let active = -1;
  let timer: number | undefined;
  let controller: AbortController | null = null;

  const hidden = h('input', { type: 'hidden', name: spec.name, value: chosen?.id ?? '' });
  const input = h('input', {
    id,
    type: 'text',
    role: 'combobox',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-autocomplete': 'list',
    'aria-expanded': 'false',
    'aria-controls': listId,
    'aria-describedby': `${hintId} ${errId}`,
    placeholder: spec.anyLabel ?? `Type to search ${spec.kind}s`,
    value: chosen?.label ?? '',
    'data-testid': `combobox-${spec.name}`,
  });
  const list = h('ul', {
    id: listId,
    role: 'listbox',
    class: 'combo-list',
    'aria-label': `${spec.label} matches`,
    hidden: true,
  });
  const status = h('p', { id: statusId, class: 'sr-only', role: 'status', 'aria-live': 'polite' });
  const err = h('p', { class: 'field-error', id: errId });
  const hint = h(
    'p',
    { class: 'hint', id: hintId },
    spec.hint ??
      `Type part of the ${spec.kind === 'product' ? 'name or SKU' : 'name'}; pick with the arrow keys and Enter.`,
    spec.anyLabel ? ` Empty: ${spec.anyLabel.toLowerCase()}.` : '',
  );

  const close = () => {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  };
  const setActive = (i: number) => {
    active = i;
    for (const [j, li] of [...list.children].entries()) li.setAttribute('aria-selected', String(j === i));
    const el = list.children[i];
    if (el) {
      input.setAttribute('aria-activedescendant', el.id);
      el.scrollIntoView({ block: 'nearest' });
    } else input.removeAttribute('aria-activedescendant');
  };
  const pick = (o: Option | null) => {
    chosen = o;
    hidden.value = o?.id ?? '';
    input.value = o?.label ?? '';
    input.removeAttribute('aria-invalid');
    err.textContent = '';
    close();
    hidden.dispatchEvent(new Event('input', { bubbles: true }));
  };
  const render = (more: boolean, q: string) => {
    put(
      list,
      options.map((o, i) =>
        h(
          'li',
          {
            id: `${id}-opt-${i}`,
            role: 'option',
            'aria-selected': 'false',
            class: 'combo-option',
            onmousedown: (e: MouseEvent) => (e.preventDefault(), pick(o)),
          },
          h('span', null, o.label),
          o.note ? h('span', { class: 'muted combo-note' }, o.note) : null,
        ),
      ),
      options.length === 0
        ? h('li', { class: 'muted combo-empty', role: 'presentation' }, `No ${spec.kind} matches “${q}”.`)
        : null,
      more ? h('li', { class: 'muted combo-empty', role: 'presentation' }, 'More match: type more to narrow.') : null,
    );
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
    put(
      status,
      options.length === 0
        ? `No ${spec.kind} matches.`
        : `${options.length}${more ? ' or more' : ''} ${spec.kind}s: arrow keys to choose.`,
    );
    setActive(-1);
  };
  const run = () => {
    controller?.abort();
    const c = new AbortController();
    controller = c;
    const q = input.value.trim();
    search(spec.kind, q, c.signal).then(
      ({ options: found, more }) => {
        if (controller !== c) return;
        options = found;
        render(more, q);
      },
      (e: unknown) => {
        if (c.signal.aborted) return;
        put(list, h('li', { class: 'combo-empty field-error', role: 'presentation' }, describeError(e)));
        list.hidden = false;
        input.setAttribute('aria-expanded', 'true');
      },
    );
  };

  input.addEventListener('input', (e) => {
    // Typing un-picks: an id is only ever what was chosen from the list.
    e.stopPropagation();
    if (chosen) {
      chosen = null;
      hidden.value = '';
      hidden.dispatchEvent(new Event('input', { bubbles: true }));
    }
    window.clearTimeout(timer);
    timer = window.setTimeout(run, SEARCH_DELAY_MS);
  });
  input.addEventListener('focus', () => {
    if (!chosen && list.hidden) run();
  });
  input.addEventListener('keydown', (e) => {
    const open = !list.hidden;
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      if (!open) run();
      else setActive(Math.min(options.length - 1, active + 1));
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      if (open) setActive(Math.max(0, active - 1));
    } else if (e.key === 'Enter') {
      if (open && active >= 0 && options[active]) {
        e.preventDefault();
        pick(options[active]!);
      } else if (open && options.length === 1) {
        e.preventDefault();
        pick(options[0]!);
      }
    } else if (e.key === 'Escape') {
      if (open) {
        e.preventDefault();
        e.stopPropagation();
        close();
      }
    }
  });
  input.addEventListener('blur', () => {
    close();
    if (!chosen && input.value.trim() !== '') {
      input.setAttribute('aria-invalid', 'true');
      err.textContent = `Pick a ${spec.kind} from the list: “${input.value.trim()}” is not one yet.`;
    } else if (!chosen && spec.required) {
      input.setAttribute('aria-invalid', 'true');
      err.textContent = `Choose a ${spec.kind}.`;
    }
  });

  const el = h(
    'div',
    { class: 'field combo' },
    h(
      'label',
      { for: id },
      spec.label,
      spec.required ? h('span', { class: 'req', 'aria-hidden': 'true' }, ' *') : null,
    ),
    h('div', { class: 'combo-box' }, input, list),
    hint,
    err,
    status,
    hidden,
  );
  return {
    el,
    value: () => chosen?.id ?? '',
    set: (o) => pick(o),
    unresolved: () => !chosen && input.value.trim() !== '',
  };
}
