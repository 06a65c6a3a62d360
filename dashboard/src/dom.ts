/**
 * The dashboard's only way to make DOM: elements from tag, attributes and children, where every
 * string child becomes a Text node. Nothing here parses HTML, so text from the API (a product
 * named `<img src=x onerror=...>`) is always shown as the characters it is. ESLint forbids
 * innerHTML, outerHTML, insertAdjacentHTML and document.write in dashboard/src
 * (eslint.config.js), so this stays the only way.
 */
export type Child = Node | string | number | null | undefined | false | readonly Child[];

type Handler<E extends Event = Event> = (event: E) => void;

export interface Attrs {
  class?: string | undefined;
  /** Element properties rather than attributes (form state). */
  value?: string | number | undefined;
  checked?: boolean | undefined;
  onclick?: Handler<MouseEvent>;
  onsubmit?: Handler<SubmitEvent>;
  oninput?: Handler;
  onchange?: Handler;
  onkeydown?: Handler<KeyboardEvent>;
  [attribute: string]: string | number | boolean | null | undefined | Handler<never>;
}

const PROPERTIES = new Set(['value', 'checked']);

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [name, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (typeof v === 'function') {
        el.addEventListener(name.slice(2), v as EventListener);
      } else if (PROPERTIES.has(name)) {
        (el as unknown as Record<string, unknown>)[name] = v;
      } else if (name === 'style') {
        // Inline style attributes are refused by the dashboard's CSP; use a class.
        throw new Error('h(): style attributes are not allowed (CSP)');
      } else {
        el.setAttribute(name === 'class' ? 'class' : name, v === true ? '' : String(v));
      }
    }
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(parent, c as readonly Child[]);
    else if (typeof c === 'string' || typeof c === 'number') parent.appendChild(document.createTextNode(String(c)));
    else parent.appendChild(c as Node);
  }
}

/** Replaces every child of `el`. */
export function put(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A link target from API data: only http(s) URLs; anything else (a `javascript:` URL) is not a link. */
export function safeHref(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** An external link (the product's or a listing's page), opened without a referrer or opener. */
export function extLink(url: string | null | undefined, text?: string): Child {
  const href = safeHref(url);
  const label = text ?? url ?? '';
  return href ? h('a', { href, target: '_blank', rel: 'noopener noreferrer nofollow' }, label) : label;
}

let uid = 0;
/** A document-unique id for label/aria wiring. */
export const nextId = (prefix = 'f') => `${prefix}-${++uid}`;
