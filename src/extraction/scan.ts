/**
 * One streaming pass over the page (htmlparser2's tokenizer, no DOM): everything the
 * automatic sources need is collected on the way, so a 150 KB page costs one parse and no
 * tree. Building a DOM (cheerio) roughly doubles the cost and is left to the listing-selector
 * path, which needs full CSS.
 */
import type { AnyNode, Document } from 'domhandler';
import { DomHandler, Parser } from 'htmlparser2';
import { BLOCK_TAGS, MAX_CAPTURE, SPLIT_CENTS, hasClass, isHiddenOrStruck, joinSplitCents } from './text.js';
import { type Collector, type VisibleScan, createCollector } from './visible/collect.js';

export type Attrs = Record<string, string>;

export interface PriceBox {
  cls: string;
  id: number;
}

/** An element whose visible text was captured. */
export interface ScanElement {
  tag: string;
  attrs: Attrs;
  /** Visible text: struck-through, hidden and screen-reader-only parts left out. */
  text: string;
  /** Position in document order among captured elements. */
  order: number;
  /** Context flags (F_*) of the element and its ancestors. */
  flags: number;
  /** The nearest `.price` ancestor-or-self (Shopify's price box): its class and a unique id. */
  priceBox?: PriceBox;
}

export interface MicroScope {
  id: number;
  parent: number;
  /** Schema.org type name: "Product", "Offer"... */
  type: string;
  source: 'microdata' | 'rdfa';
  /** The property this item is the value of in its parent ("offers"). */
  prop?: string;
  order: number;
}

export interface MicroProp {
  scope: number;
  name: string;
  source: 'microdata' | 'rdfa';
  /** From content/href/value/datetime attributes; else `el` holds the text. */
  value?: string;
  attr?: string;
  el?: ScanElement;
}

export interface PageScan {
  jsonLd: string[];
  /** Inline scripts naming ShopifyAnalytics, Shopify.currency or BCData. */
  scripts: string[];
  /** application/json scripts (Shopify product JSON and the like). */
  jsonScripts: Array<{ attrs: Attrs; text: string }>;
  metas: Array<{ key: string; content: string }>;
  canonical?: string;
  scopes: MicroScope[];
  props: MicroProp[];
  platform: { shopify: boolean; woocommerce: boolean; magento: boolean; bigcommerce: boolean };
  shopifyPrices: ScanElement[];
  wooPrices: ScanElement[];
  wooStock: ScanElement[];
  wooProductClass?: string;
  magentoPrices: ScanElement[];
  magentoStock: ScanElement[];
  bcPrices: ScanElement[];
  buttons: ScanElement[];
  /** What the visible-price finder reads; absent when it is turned off. */
  visible?: VisibleScan;
  /** Reading stopped early: elements nested deeper than MAX_NESTING. */
  truncated?: boolean;
}

/** Context flags an element inherits from its ancestors (ScanElement.flags). */
export const F_WOO_SUMMARY = 1; // inside .summary / .entry-summary (WooCommerce single product)
export const F_SHOPIFY_MAIN = 2; // inside the main product section of a Shopify theme
export const F_PRICE_REGULAR = 8; // inside .price__regular (Shopify price box)
export const F_MAGENTO_MAIN = 16; // inside .product-info-main / .product-info-price
export const F_BC_MAIN = 32; // inside .productView (BigCommerce)
export const F_CART_FORM = 64; // inside an add-to-cart form

const BC_ATTRS = [
  'data-product-price-with-tax',
  'data-product-price-without-tax',
  'data-product-rrp-with-tax',
  'data-product-rrp-without-tax',
  'data-product-non-sale-price-with-tax',
  'data-product-non-sale-price-without-tax',
] as const;

const MICRO_PROPS: ReadonlySet<string> = new Set([
  'price',
  'lowprice',
  'highprice',
  'pricecurrency',
  'availability',
  'name',
  'url',
  'sku',
  'pricetype',
]);
const ADD_TO_CART =
  /add[-_ ]?to[-_ ]?(?:cart|bag|basket)|addtocart|add_to_cart|product-form__submit|single_add_to_cart_button|btn-cart|tocart|buy-now|buynow/i;
const MAX_LIST = 50;
/** Quick pre-check before the exact class tests; most class attributes fail it. */
const INTERESTING_CLASS = /summary|product|price|productView|shopify|woocommerce/;

interface Frame {
  tag: string;
  flags: number;
  scope: number;
  priceBox?: PriceBox;
  hidden: boolean;
}

interface Capture {
  el: ScanElement;
  depth: number;
  parts: string[];
  length: number;
  hiddenBase: number;
  /** Where each open inline element's text starts in `parts` (cents set apart, see joinSplitCents). */
  inline: number[];
}

function typeName(value: string, vocab: string | undefined): string {
  const first = value.trim().split(/\s+/)[0] ?? '';
  const name = first.split(/[/#:]/).pop() ?? '';
  return name || (vocab ? '' : first);
}

function propNames(value: string): string[] {
  const out: string[] = [];
  for (const raw of value.trim().split(/\s+/)) {
    if (/^(?:og|product|fb|twitter|article|al):/i.test(raw)) continue;
    const name = raw.replace(/^(?:https?:\/\/schema\.org\/|schema:)/i, '').toLowerCase();
    if (MICRO_PROPS.has(name) || name === 'offers' || name === 'pricespecification') out.push(name);
  }
  return out;
}

function attrValue(tag: string, a: Attrs): { value?: string; attr?: string } {
  if (a.content !== undefined) return { value: a.content, attr: 'content' };
  if ((tag === 'link' || tag === 'a' || tag === 'area') && a.href !== undefined) return { value: a.href, attr: 'href' };
  if (a.resource !== undefined) return { value: a.resource, attr: 'resource' };
  if ((tag === 'data' || tag === 'meter' || tag === 'input') && a.value !== undefined)
    return { value: a.value, attr: 'value' };
  if (tag === 'time' && a.datetime !== undefined) return { value: a.datetime, attr: 'datetime' };
  return {};
}

interface ScanHandler {
  onopentag(tag: string, attrs: Attrs): void;
  ontext(data: string): void;
  onclosetag(tag: string): void;
}

/**
 * Deepest element nesting read. htmlparser2 keeps its open elements in an array it unshifts,
 * so unclosed-tag soup (or a hostile page) nested 100 000 deep costs seconds; real pages nest
 * a few dozen deep. Reading stops at this depth, keeping what was found so far.
 */
export const MAX_NESTING = 1000;

/** Streams the page through the scanner: tokenizing only, no tree. */
export function scanPage(html: string, visible = false): PageScan {
  const ref: { parser?: Parser } = {};
  const { handler, finish } = createScanner(() => ref.parser?.pause(), visible);
  ref.parser = new Parser(handler, { decodeEntities: true });
  ref.parser.end(html);
  return finish();
}

/** Parses a DOM (for the selector path) with the same nesting limit as the scanner. */
export function parseDocument(html: string): { root: Document; truncated: boolean } {
  const ref: { parser?: Parser } = {};
  let depth = 0;
  let truncated = false;
  class Guarded extends DomHandler {
    override onopentag(name: string, attribs: Attrs): void {
      if (depth >= MAX_NESTING) {
        truncated = true;
        ref.parser?.pause();
        return;
      }
      depth++;
      super.onopentag(name, attribs);
    }
    override onclosetag(): void {
      if (truncated) return;
      depth--;
      super.onclosetag();
    }
  }
  const handler = new Guarded();
  ref.parser = new Parser(handler, { decodeEntities: true });
  ref.parser.end(html);
  return { root: handler.root, truncated };
}

/**
 * Replays an already parsed document (the selector path's DOM) through the same scanner, so a
 * page with a selector is still tokenized only once.
 */
export function scanDocument(root: AnyNode, visible = false): PageScan {
  const { handler, finish } = createScanner(undefined, visible);
  // Iterative, so no DOM is too deep for the call stack: [node, entered?] pairs.
  const todo: Array<[AnyNode, boolean]> = [[root, false]];
  while (todo.length) {
    const [n, entered] = todo.pop() as [AnyNode, boolean];
    if (n.type === 'text') handler.ontext(n.data);
    else if (n.type === 'tag' || n.type === 'script' || n.type === 'style') {
      if (entered) {
        handler.onclosetag(n.name);
        continue;
      }
      handler.onopentag(n.name, n.attribs);
      todo.push([n, true]);
      for (let i = n.children.length - 1; i >= 0; i--) todo.push([n.children[i] as AnyNode, false]);
    } else if (n.type === 'root') {
      for (let i = n.children.length - 1; i >= 0; i--) todo.push([n.children[i] as AnyNode, false]);
    }
  }
  return finish();
}

function createScanner(stop?: () => void, visible = false): { handler: ScanHandler; finish: () => PageScan } {
  const out: PageScan = {
    jsonLd: [],
    scripts: [],
    jsonScripts: [],
    metas: [],
    scopes: [],
    props: [],
    platform: { shopify: false, woocommerce: false, magento: false, bigcommerce: false },
    shopifyPrices: [],
    wooPrices: [],
    wooStock: [],
    magentoPrices: [],
    magentoStock: [],
    bcPrices: [],
    buttons: [],
  };
  const stack: Frame[] = [];
  const captures: Capture[] = [];
  let hiddenDepth = 0;
  let order = 0;
  let script: { kind: 'ld' | 'js' | 'json'; attrs: Attrs; parts: string[] } | undefined;
  let inStyle = false;
  const vis: Collector | undefined = visible ? createCollector() : undefined;
  if (vis) out.visible = vis.result;

  let boxes = 0;
  const capture = (tag: string, attrs: Attrs, flags: number, priceBox: PriceBox | undefined): ScanElement => {
    const el: ScanElement = { tag, attrs, text: '', order: order++, flags, priceBox };
    captures.push({ el, depth: stack.length, parts: [], length: 0, hiddenBase: hiddenDepth, inline: [] });
    return el;
  };

  const handler: ScanHandler = {
    onopentag(tag, attrs) {
      if (out.truncated || stack.length >= MAX_NESTING) {
        out.truncated = true;
        stop?.();
        return;
      }
      const parent = stack[stack.length - 1];
      let flags = parent?.flags ?? 0;
      let scope = parent?.scope ?? -1;
      let priceBox = parent?.priceBox;

      // One look at the attributes (usually one to three) instead of a lookup per name.
      let cls: string | undefined;
      let id: string | undefined;
      let special = false;
      let bcAttr = false;
      for (const k in attrs) {
        if (k === 'class') cls = attrs[k];
        else if (k === 'id') id = attrs[k];
        else if (
          k === 'itemprop' ||
          k === 'itemscope' ||
          k === 'property' ||
          k === 'typeof' ||
          k === 'data-price-amount' ||
          k === 'data-cart-item-add'
        ) {
          special = true;
        } else if (k.startsWith('data-product-') && (BC_ATTRS as readonly string[]).includes(k)) bcAttr = true;
      }

      if (tag === 'script') {
        const type = (attrs.type ?? '').trim().toLowerCase();
        if (type.startsWith('application/ld+json')) script = { kind: 'ld', attrs, parts: [] };
        else if (attrs.src === undefined && (type === '' || type.includes('javascript') || type === 'module')) {
          script = { kind: 'js', attrs, parts: [] };
        } else if (type === 'application/json') script = { kind: 'json', attrs, parts: [] };
        else if (type === 'text/x-magento-init') out.platform.magento = true;
        if (attrs.src?.includes('cdn.shopify.com')) out.platform.shopify = true;
        if (attrs.src?.includes('bigcommerce.com')) out.platform.bigcommerce = true;
      } else if (tag === 'style') inStyle = true;
      else if (tag === 'meta') {
        const key = (attrs.property ?? attrs.name ?? '').trim().toLowerCase();
        if (key && attrs.content !== undefined && out.metas.length < 200)
          out.metas.push({ key, content: attrs.content });
        if (key === 'generator' && attrs.content) {
          if (/woocommerce/i.test(attrs.content)) out.platform.woocommerce = true;
          if (/magento/i.test(attrs.content)) out.platform.magento = true;
        }
        if (key.startsWith('shopify-')) out.platform.shopify = true;
      } else if (tag === 'link') {
        if (attrs.rel?.toLowerCase() === 'canonical' && attrs.href && !out.canonical) out.canonical = attrs.href;
        if (attrs.href?.includes('cdn.shopify.com')) out.platform.shopify = true;
      } else if (tag === 'body' && cls) {
        if (/\bwoocommerce\b/.test(cls)) out.platform.woocommerce = true;
        if (/\bcatalog-product-view\b/.test(cls)) out.platform.magento = true;
      }

      if (cls && INTERESTING_CLASS.test(cls)) {
        if (hasClass(cls, 'summary') || hasClass(cls, 'entry-summary')) flags |= F_WOO_SUMMARY;
        if (
          hasClass(cls, 'product__info-container') ||
          hasClass(cls, 'product__info-wrapper') ||
          hasClass(cls, 'product-single') ||
          hasClass(cls, 'product-single__meta')
        ) {
          flags |= F_SHOPIFY_MAIN;
        }
        if (hasClass(cls, 'price__regular')) flags |= F_PRICE_REGULAR;
        if (hasClass(cls, 'product-info-main') || hasClass(cls, 'product-info-price')) flags |= F_MAGENTO_MAIN;
        if (hasClass(cls, 'productView')) flags |= F_BC_MAIN;
        if (hasClass(cls, 'price')) priceBox = { cls, id: boxes++ };
        if (hasClass(cls, 'shopify-section') || hasClass(cls, 'shopify-payment-button')) out.platform.shopify = true;
        if (hasClass(cls, 'woocommerce-Price-amount')) out.platform.woocommerce = true;
      }
      if (id && /__main$|^ProductSection/.test(id)) flags |= F_SHOPIFY_MAIN;
      if (tag === 'form') {
        const action = attrs.action ?? '';
        if (
          action.includes('/cart/add') ||
          hasClass(cls, 'cart') ||
          id === 'product_addtocart_form' ||
          attrs['data-cart-item-add'] !== undefined
        ) {
          flags |= F_CART_FORM;
        }
      }

      if (special) {
        // Microdata (itemscope/itemprop) and RDFa (typeof/property).
        const itemprop =
          attrs.itemprop ?? (attrs.property !== undefined && tag !== 'meta' ? attrs.property : undefined);
        const metaProp =
          tag === 'meta'
            ? (attrs.itemprop ?? (/^(?:schema:)?[a-z]+$/i.test(attrs.property ?? '') ? attrs.property : undefined))
            : undefined;
        const propAttr = itemprop ?? metaProp;
        const propSource: MicroScope['source'] = attrs.itemprop !== undefined ? 'microdata' : 'rdfa';
        const names = propAttr ? propNames(propAttr) : [];
        const opensScope = attrs.itemscope !== undefined || attrs.typeof !== undefined;
        if (names.length && !opensScope) {
          const plain = names.filter((n) => n !== 'offers' && n !== 'pricespecification');
          if (plain.length) {
            const { value, attr } = attrValue(tag, attrs);
            let el: ScanElement | undefined;
            if (value === undefined && out.props.length < 400) el = capture(tag, attrs, flags, priceBox);
            for (const name of plain)
              if (out.props.length < 400) out.props.push({ scope, name, source: propSource, value, attr, el });
          }
        }
        if (opensScope && out.scopes.length < 400) {
          const isMicro = attrs.itemscope !== undefined;
          const s: MicroScope = {
            id: out.scopes.length,
            parent: scope,
            type: typeName((isMicro ? attrs.itemtype : attrs.typeof) ?? '', attrs.vocab),
            source: isMicro ? 'microdata' : 'rdfa',
            prop: names[0],
            order: order++,
          };
          out.scopes.push(s);
          scope = s.id;
        }
        if (attrs['data-price-amount'] !== undefined && out.magentoPrices.length < MAX_LIST) {
          out.magentoPrices.push(capture(tag, attrs, flags, priceBox));
        }
      }

      // Platform price and stock elements.
      if (cls) {
        if (hasClass(cls, 'price-item') && out.shopifyPrices.length < MAX_LIST)
          out.shopifyPrices.push(capture(tag, attrs, flags, priceBox));
        if (flags & F_WOO_SUMMARY) {
          if (hasClass(cls, 'price') && out.wooPrices.length < 5)
            out.wooPrices.push(capture(tag, attrs, flags, priceBox));
          if (hasClass(cls, 'stock') && out.wooStock.length < 5)
            out.wooStock.push(capture(tag, attrs, flags, priceBox));
        }
        if (
          tag === 'div' &&
          out.wooProductClass === undefined &&
          hasClass(cls, 'type-product') &&
          hasClass(cls, 'product')
        ) {
          out.wooProductClass = cls;
        }
        if (flags & F_MAGENTO_MAIN && hasClass(cls, 'stock') && out.magentoStock.length < 5) {
          out.magentoStock.push(capture(tag, attrs, flags, priceBox));
        }
      }
      if (bcAttr && out.bcPrices.length < MAX_LIST) {
        out.bcPrices.push(capture(tag, attrs, flags, priceBox));
        out.platform.bigcommerce = true;
      }
      if ((tag === 'button' || tag === 'input') && out.buttons.length < 5) {
        const type = (attrs.type ?? (tag === 'button' ? 'submit' : 'text')).toLowerCase();
        const looksLikeAdd =
          attrs.name === 'add' ||
          ADD_TO_CART.test(`${id ?? ''} ${cls ?? ''} ${attrs.name ?? ''}`) ||
          (flags & F_CART_FORM && type === 'submit');
        if (looksLikeAdd && (tag === 'button' || type === 'submit' || type === 'button')) {
          out.buttons.push(capture(tag, attrs, flags, priceBox));
        }
      }

      const made = vis?.open(tag, attrs, cls, id);
      if (made) {
        const el = capture(tag, attrs, flags, priceBox);
        for (const n of made) n.el = el;
      }

      // Hidden and struck-through text only matters inside a capture.
      let hidden = false;
      if (captures.length) {
        hidden = isHiddenOrStruck(tag, attrs);
        if (hidden) hiddenDepth++;
        if (BLOCK_TAGS.has(tag)) {
          for (const c of captures) if (c.depth < stack.length) c.parts.push(' ');
        } else for (const c of captures) if (c.depth < stack.length) c.inline.push(c.parts.length);
        // A captured element's own hiddenness doesn't hide its text (a selector may pick a <del>).
        for (let i = captures.length - 1; i >= 0; i--) {
          const c = captures[i] as Capture;
          if (c.depth === stack.length && c.el.attrs === attrs) c.hiddenBase = hiddenDepth;
          else break;
        }
      }
      stack.push({ tag, flags, scope, priceBox, hidden });
    },
    ontext(data) {
      if (script) {
        script.parts.push(data);
        return;
      }
      if (inStyle) return;
      vis?.text(data);
      if (captures.length === 0) return;
      for (const c of captures) {
        if (hiddenDepth === c.hiddenBase && c.length < MAX_CAPTURE) {
          c.parts.push(data);
          c.length += data.length;
        }
      }
    },
    onclosetag(tag) {
      if (out.truncated) return;
      if (tag === 'script' && script) {
        const text = script.parts.join('');
        if (script.kind === 'ld') {
          if (out.jsonLd.length < 50) out.jsonLd.push(text);
        } else if (script.kind === 'json') {
          if (out.jsonScripts.length < 20) out.jsonScripts.push({ attrs: script.attrs, text });
        } else if (/ShopifyAnalytics|Shopify\.currency|Shopify\.shop|BCData/.test(text)) {
          if (text.includes('Shopify')) out.platform.shopify = true;
          if (text.includes('BCData')) out.platform.bigcommerce = true;
          if (out.scripts.length < 20) out.scripts.push(text);
        }
        script = undefined;
      } else if (tag === 'style') inStyle = false;
      const frame = stack.pop();
      if (!frame) return;
      vis?.close();
      if (frame.hidden) hiddenDepth--;
      if (captures.length === 0) return;
      if (BLOCK_TAGS.has(tag)) {
        for (const c of captures) if (c.depth < stack.length) c.parts.push(' ');
      } else {
        for (const c of captures) {
          if (c.depth >= stack.length) continue;
          const at = c.inline.pop();
          // Only an element holding two digits on their own joins (a cheap test first).
          if (at === undefined || at !== c.parts.length - 1 || !SPLIT_CENTS.test(c.parts[at] as string)) continue;
          const cents = c.parts.pop() as string;
          c.parts.push(joinSplitCents(c.parts.splice(0).join(''), cents));
        }
      }
      while (captures.length && (captures[captures.length - 1] as Capture).depth >= stack.length) {
        const c = captures.pop() as Capture;
        c.el.text = c.parts.join('').replace(/\s+/g, ' ').trim();
      }
    },
  };
  const finish = (): PageScan => {
    // Elements still open at the end of a truncated page.
    for (const c of captures) c.el.text = c.parts.join('').replace(/\s+/g, ' ').trim();
    return out;
  };
  return { handler, finish };
}
