/**
 * What the visible-price finder needs from the page, gathered during the scanner's one streaming
 * pass (scan.ts calls open/text/close in step with its own stack): price-marked elements and
 * price-like text, stock messages, the product title, the buy buttons, each with the region it
 * stands in (header, cart, carousel, struck-through...), its ancestors and a CSS path.
 */
import { availabilityFromText, buttonLabelKind } from '../availability.js';
import { isIsoCode } from '../../money/currency.js';
import {
  BUY_HREF,
  BUY_WORD,
  classKinds,
  K_BADGE,
  K_BUY,
  K_BUYISH,
  K_CART,
  K_CHROME,
  K_CURRENT,
  K_EXTAX,
  K_FORM,
  K_HIDDEN,
  K_MAINLIKE,
  K_OLD,
  K_OTHERS,
  K_PRICE,
  K_STOCK,
  K_TERMS,
  PRICE_WORD,
} from '../class-words.js';
import { SPLIT_CENTS, joinSplitCents } from '../text.js';

type Attrs = Record<string, string>;

/** The scanner's capture of an element (its ScanElement): `text` is set when the element closes. */
export interface Captured {
  attrs: Attrs;
  text: string;
}

/** Regions an element inherits from its ancestors (VisibleNode.ctx). */
export const C_HIDDEN = 1;
export const C_STRUCK = 2; // <del>, <s>, line-through, old-price classes
export const C_CHROME = 4; // site header, footer, navigation, menus, breadcrumbs
export const C_CART = 8; // mini cart, cart drawer
export const C_OTHERS = 16; // carousels, related / recommended products, product cards
export const C_TERMS = 32; // shipping, instalments, financing, unit prices, savings
export const C_MAINLIKE = 64; // <main>, <article>, product-detail containers
export const C_FORM = 128; // add-to-cart form
export const C_PRICEBOX = 256; // inside a price-marked element
export const C_OLDBOX = 512; // inside an old-price-marked element
const C_MAINTAG = 1024; // inside <main> or <article>: page <header>/<footer> below it are not chrome
export const C_EXTAX = 4096; // a price without VAT ("notax", "price-excl-tax")
const SETS_OTHERS = 2048; // this element itself starts a C_OTHERS region (never inherited)

/** Marks of the element itself (VisibleNode.marks). */
export const M_PRICE = 1;
export const M_CURRENT = 2;
export const M_ITEMPROP = 4;
export const M_ARIA = 8;
export const M_OLD = 16;

export interface VisibleNode {
  /** Element count before this element: distance in document order. */
  seq: number;
  /** Ids of the ancestors and the element itself, outermost first. */
  chain: number[];
  ctx: number;
  /** The innermost ancestor that made this a C_OTHERS region (a wrapper around the h1 is the product page, not a carousel). */
  othersUid?: number;
  marks: number;
  /** Marks of the nearest price-marked ancestors (up to three levels up). */
  boxMarks: number;
  /** CSS path to the element. */
  path: string;
  tag: string;
  /** A captured element (text filled when it closes), or a text node's text. */
  el?: Captured;
  text?: string;
  disabled?: boolean;
  /** A button whose class, id or form marks it as the add-to-cart button (else its label decides). */
  buy?: boolean;
  /** Index in VisibleScan.chunks where the node starts (for a text node: just after its first piece). */
  at: number;
}

export interface VisibleScan {
  /** The <html lang> attribute. */
  lang?: string;
  /** The page's visible text pieces, in order, with a space at block boundaries. */
  chunks: string[];
  prices: VisibleNode[];
  stock: VisibleNode[];
  buttons: VisibleNode[];
  h1?: VisibleNode;
}

interface VFrame {
  uid: number;
  tag: string;
  attrs: Attrs;
  nth: number;
  ctx: number;
  othersUid?: number;
  marks: number;
  /** Element children opened so far (for :nth-child). */
  kids: number;
  /** Its text is set apart from its neighbours' (isBlock). */
  block: boolean;
}

const MAX_PRICES = 300;
/** Prices in headers, carts and carousels kept (to be listed as ignored); the rest are not read at all. */
const MAX_OUTSIDE = 6;
const MAX_OTHERS = 40;
const MAX_STOCK = 20;
const MAX_BUTTONS = 20;
const MAX_COMPACTIONS = 50;
const MAX_CHUNKS = 20_000;

function segment(f: VFrame): string {
  const id = f.attrs.id;
  if (id && /^[A-Za-z][\w-]*$/.test(id)) return `#${id}`;
  const cls = (f.attrs.class ?? '').trim().split(/\s+/)[0];
  const c = cls && /^[A-Za-z_][\w-]*$/.test(cls) ? `.${cls}` : '';
  return `${f.tag}${c}:nth-child(${f.nth})`;
}

/**
 * Whether a node stands in a list of other products (carousel, related products). A list-like
 * wrapper that also holds the title (`listing`, `products` around the whole product page) is
 * the product page itself.
 */
export function amongOthers(n: VisibleNode, h1: VisibleNode | undefined): boolean {
  return (n.ctx & C_OTHERS) !== 0 && (h1?.othersUid === undefined || n.othersUid !== h1.othersUid);
}

/** A node's place without its position among siblings: li.card:nth-child(1), (2), (3) share one. */
export const shapeOf = (n: VisibleNode): string => n.path.replace(/:nth-child\(\d+\)/g, '');

/** The shapes three or more of the nodes share: a list (of products, sellers, sizes), not one product's. */
export function repeatedShapes(nodes: readonly VisibleNode[]): Set<string> {
  const count = new Map<string, number>();
  for (const n of nodes) count.set(shapeOf(n), (count.get(shapeOf(n)) ?? 0) + 1);
  return new Set([...count].filter(([, c]) => c >= 3).map(([shape]) => shape));
}

/** A button's label as a shopper reads it. */
export function buttonLabel(b: VisibleNode): string {
  return (
    (b.el ? b.el.text : (b.text ?? '')).replace(/\s+/g, ' ').trim() ||
    b.el?.attrs.value ||
    b.el?.attrs['aria-label'] ||
    ''
  );
}

/**
 * The buy button the finder anchors on: the first marked as add-to-cart, or labelled to buy, sold
 * out or pre-order, that does not stand among other products.
 */
export function buyButton(buttons: readonly VisibleNode[], h1: VisibleNode | undefined): VisibleNode | undefined {
  return buttons.find((b) => {
    if (amongOthers(b, h1)) return false;
    if (b.buy) return true;
    const label = buttonLabel(b);
    const kind = buttonLabelKind(label);
    // A link styled as a button counts when it says buy: "Out of Stock" links sit in sellers' rows.
    if (b.tag === 'a') return kind === 'buy';
    // A <div> or <span> named "buy" may be the whole buy box: only a short label is a button's.
    if (b.tag === 'div' || b.tag === 'span') return kind !== undefined && label.length <= 40;
    return kind !== undefined;
  });
}

/**
 * Reading stops this far past the product block (the smallest element holding the title and the
 * buy button), once also past the reach of the finder's distance points (100 elements after the
 * button, 150 after the title): a price there scores at most 7 (marks, currency, a form of its
 * own, less 3 for standing outside the block) against the block's own 12 or more, and a stock
 * message there is not read. Reviews, descriptions and related products below the product are
 * most of a long page.
 */
const PAST_BLOCK = 50;
const PAST_BUTTON = 100;
const PAST_TITLE = 150;

export interface Collector {
  /**
   * Returns the nodes made for this element, whose `el` the scanner then sets to its capture of
   * the element (a closure per element would cost more than the rest of the work).
   */
  open(tag: string, attrs: Attrs, cls: string | undefined, id: string | undefined): VisibleNode[] | undefined;
  text(data: string): void;
  close(): void;
  result: VisibleScan;
}

const DIGIT = /\d/;
/** Elements whose text is set apart from their neighbours' (a space in VisibleScan.chunks). */
function isBlock(tag: string): boolean {
  // A switch on the first letter: cheaper than hashing every tag name into a Set.
  switch (tag.charCodeAt(0)) {
    case 100: // d
      return tag === 'div' || tag === 'dd' || tag === 'dt';
    case 112: // p
      return tag === 'p';
    case 108: // l
      return tag === 'li' || tag === 'label';
    case 116: // t
      return tag === 'td' || tag === 'th' || tag === 'tr' || tag === 'table';
    case 104: // h
      return tag.length === 2 ? tag !== 'hr' : tag === 'header';
    case 115: // s
      return tag === 'section';
    case 102: // f
      return tag === 'form' || tag === 'footer';
    case 97: // a
      return tag === 'article' || tag === 'aside';
    case 98: // b
      return tag === 'br' || tag === 'button';
    case 109: // m
      return tag === 'main';
    case 117: // u
      return tag === 'ul';
    case 111: // o
      return tag === 'ol';
    default:
      return false;
  }
}
/** A currency sign or abbreviation: text beside a number is worth reading as a price when not price-marked. */
const CURRENCY_SIGN =
  /[$€£¥₹₽₩₺₴₫₪฿₱₦₡₲₵₸₼₾₭₮៛৳元円원]|(?<![\p{L}])(?:zł|kr|Kč|Ft|lei|лв|руб|грн|тг|ден|дин|kn|Kn|Rp|RM|Rs|TL|CHF|KD|BD|QR|JD|KSh)(?![\p{L}])/u;
const CODE_WORD = /(?<![\p{L}])[A-Z]{3}(?![\p{L}])/gu;
function currencyish(text: string): boolean {
  if (CURRENCY_SIGN.test(text)) return true;
  for (const m of text.matchAll(CODE_WORD)) if (isIsoCode(m[0])) return true;
  return false;
}
/** A piece of text that is only a number ("229", "1.299", "99"): maybe part of a price split over elements. */
const NUMERIC = /^\s*\d[\d.,'’ \u00a0\u202f]*\s*$/;
const BLANK = /^\s*$/;
/** Text pieces that may state the stock are short ("In stock", "Nicht auf Lager", "Skladem"). */
const MAX_STOCK_TEXT = 60;
const MAX_STOCK_TEXTS = 10;

/**
 * Adjacent inline text pieces with no block between them that together are one price: "$" "229"
 * "99", "249" "₽", "35" "€" "99". A run holds at most one currency; a number joins one without a
 * number yet, or as two-digit cents after one (joinSplitCents). Once it holds a number and a
 * currency it is a price node, whose text grows with the run.
 */
interface Run {
  node?: VisibleNode;
  text: string;
  /** The first piece's element chain, seq, chunk position and region flags. */
  chain: number[];
  seq: number;
  at: number;
  ctx: number;
  othersUid?: number;
  digit: boolean;
  currency: boolean;
  pieces: number;
  /** `boundaries` when the run last grew: a block boundary since then ends it. */
  boundary: number;
}

export function createCollector(): Collector {
  const chunks: string[] = [];
  const result: VisibleScan = { chunks, prices: [], stock: [], buttons: [] };
  // Frames are reused as the depth goes up and down: one object per depth, not per element.
  const stack: VFrame[] = [];
  let depth = 0;
  /** Depth inside a hidden or chrome element's children, which are not read (0: reading). */
  let skipped = 0;
  /** `seq` from which nothing more is read (set when the product block closes), and whether that point is passed. */
  let stopAt = Infinity;
  let done = false;
  let rootKids = 0;
  let uid = 0;
  let seq = 0;
  // The nodes made by the element being opened (reused: one array per page, not per element).
  const made: VisibleNode[] = [];
  const keep = (n: VisibleNode): VisibleNode => {
    made.push(n);
    return n;
  };
  let outside = 0;
  let others = 0;
  /** Block boundaries so far: text pieces with one between them are not one price. */
  let boundaries = 0;
  let run: Run | undefined;
  let stockTexts = 0;
  const room = (ctx: number): boolean =>
    result.prices.length < MAX_PRICES &&
    (ctx & (C_CHROME | C_CART)
      ? outside++ < MAX_OUTSIDE
      : ctx & C_OTHERS
        ? // Once the title is seen outside any list, lists are other products: a few are enough to show.
          others++ < (result.h1 && result.h1.othersUid === undefined ? MAX_OUTSIDE : MAX_OTHERS)
        : true);

  const pushFrame = (
    tag: string,
    attrs: Attrs,
    nth: number,
    ctx: number,
    othersUid: number | undefined,
    marks: number,
  ): VFrame => {
    let f = stack[depth];
    if (f) {
      f.uid = uid++;
      f.tag = tag;
      f.attrs = attrs;
      f.nth = nth;
      f.ctx = ctx;
      f.othersUid = othersUid;
      f.marks = marks;
      f.kids = 0;
      f.block = isBlock(tag);
    } else stack[depth] = f = { uid: uid++, tag, attrs, nth, ctx, othersUid, marks, kids: 0, block: isBlock(tag) };
    depth++;
    if (f.block) {
      chunks.push(' ');
      boundaries++;
    }
    return f;
  };
  const node = (f: VFrame, extra: Partial<VisibleNode>): VisibleNode => {
    let boxMarks = 0;
    for (let i = depth - 2, n = 0; i >= 0 && n < 3; i--, n++) boxMarks |= (stack[i] as VFrame).marks;
    return {
      seq,
      chain: chainTo(depth),
      ctx: f.ctx,
      othersUid: f.othersUid,
      marks: f.marks,
      boxMarks,
      path: cssPath(depth),
      tag: f.tag,
      at: chunks.length,
      ...extra,
    };
  };
  const chainTo = (levels: number): number[] => {
    const chain: number[] = [];
    for (let i = 0; i < levels; i++) chain.push((stack[i] as VFrame).uid);
    return chain;
  };
  // From the nearest ancestor with an id, else from <body>; of the element `levels` deep.
  const cssPath = (levels: number): string => {
    const parts: string[] = [];
    for (let i = levels - 1; i >= 0; i--) {
      const f = stack[i] as VFrame;
      if (f.tag === 'body' || f.tag === 'html') {
        parts.push(f.tag);
        break;
      }
      const s = segment(f);
      parts.push(s);
      if (s.startsWith('#')) break;
    }
    return parts.reverse().join(' > ');
  };

  // Before the title is seen, a list-like wrapper may still turn out to be the product page
  // itself (amongOthers decides once the title is known).
  const ownRegion = (ctx: number, othersUid: number | undefined): boolean =>
    !(ctx & C_OTHERS) || result.h1 === undefined || result.h1.othersUid === othersUid;
  // Cookie banners, dialogs and maps fill the list with buttons that say nothing, a list of
  // products with a button per product: once it is full, only those that may be the buy button
  // stay (every one kept so far has closed), and none repeated in the same place (repeatedShape).
  // At most MAX_COMPACTIONS times: a page of thousands of buttons costs no more than a few dozen.
  let compactions = 0;
  const roomForButton = (): boolean => {
    if (result.buttons.length < MAX_BUTTONS) return true;
    if (compactions++ >= MAX_COMPACTIONS) return false;
    const shapes = repeatedShapes(result.buttons);
    result.buttons = result.buttons.filter(
      (b) => !shapes.has(shapeOf(b)) && (b.buy || buttonLabelKind(buttonLabel(b)) !== undefined),
    );
    return result.buttons.length < MAX_BUTTONS;
  };

  /** Adds a piece to the run, or says it cannot join (see Run). */
  const extend = (r: Run, f: VFrame, data: string, numeric: boolean, currency: boolean): boolean => {
    if (r.boundary !== boundaries || r.ctx !== f.ctx || r.pieces >= 4) return false;
    const spaced = /\s$/.test(r.text);
    if (currency) {
      if (r.currency) return false;
      r.text += data;
    } else if (numeric) {
      const cents = SPLIT_CENTS.test(data) && /[\d\p{Sc}\p{L}.]$/u.test(r.text);
      if (r.digit && !cents) return false;
      r.text = cents && !spaced && /\d$/.test(r.text) ? joinSplitCents(r.text, data) : r.text + data;
    } else return false;
    r.digit ||= numeric;
    r.currency ||= currency;
    r.pieces++;
    // The smallest element holding every piece: its path pins the whole price.
    let common = 0;
    while (common < r.chain.length && common < depth && r.chain[common] === (stack[common] as VFrame).uid) common++;
    if (r.node) {
      r.node.text = r.text;
      r.node.path = cssPath(common);
      r.node.chain = r.chain.slice(0, common);
    } else if (r.digit && r.currency && room(r.ctx)) {
      const top = stack[common - 1] as VFrame | undefined;
      r.node = {
        seq: r.seq,
        chain: r.chain.slice(0, common),
        ctx: r.ctx,
        othersUid: r.othersUid,
        marks: 0,
        boxMarks: 0,
        path: cssPath(common),
        tag: top?.tag ?? 'body',
        at: r.at,
        text: r.text,
      };
      result.prices.push(r.node);
    }
    return true;
  };

  return {
    result,
    open(tag, attrs, cls, id) {
      if (done) return undefined;
      if (++seq > stopAt) {
        done = true;
        return undefined;
      }
      // Inside a hidden element, the site header, footer or navigation: nothing to read (menus and
      // footers are half of a page's elements) and no CSS path goes through it, so not even a
      // frame: a depth count, and `seq` for the distances between the elements that are read.
      if (skipped) {
        skipped++;
        return undefined;
      }
      if (made.length) made.length = 0;
      const parent = depth > 0 ? stack[depth - 1] : undefined;
      const nth = parent ? ++parent.kids : ++rootKids;
      if (tag === 'html' && attrs.lang) result.lang = attrs.lang;
      if (parent && parent.ctx & (C_HIDDEN | C_CHROME)) {
        skipped = 1;
        return undefined;
      }
      let ctx = (parent?.ctx ?? 0) & ~C_PRICEBOX & ~C_OLDBOX;
      if (parent && parent.ctx & (C_PRICEBOX | C_OLDBOX)) ctx |= parent.ctx & (C_PRICEBOX | C_OLDBOX);
      let marks = 0;

      if (tag === 'del' || tag === 's' || tag === 'strike') ctx |= C_STRUCK;
      else if (
        tag === 'script' ||
        tag === 'style' ||
        tag === 'noscript' ||
        tag === 'template' ||
        tag === 'head' ||
        tag === 'title'
      )
        ctx |= C_HIDDEN;
      else if (tag === 'main' || tag === 'article') ctx |= C_MAINLIKE | C_MAINTAG;
      // A dialog waits closed for a click ("Notify me when back", a quick view): not the page as shown.
      else if (tag === 'dialog' && attrs.open === undefined) ctx |= C_HIDDEN;
      else if ((tag === 'header' || tag === 'footer' || tag === 'nav') && !(ctx & C_MAINTAG)) ctx |= C_CHROME;
      else if (tag === 'aside' && !(classKinds(cls, id) & K_MAINLIKE)) ctx |= C_OTHERS | SETS_OTHERS;
      // One pass over the attributes (usually one to three) instead of a lookup per name.
      let style: string | undefined;
      let itemprop: string | undefined;
      let itemtype: string | undefined;
      let label: string | undefined;
      let hook: string | undefined;
      for (const a in attrs) {
        switch (a) {
          case 'hidden':
            // aria-hidden is not: shops hide the visible price from screen readers and show them a copy.
            ctx |= C_HIDDEN;
            break;
          case 'role':
            if (attrs[a] === 'dialog' || attrs[a] === 'alertdialog') ctx |= C_HIDDEN;
            break;
          case 'aria-modal':
            ctx |= C_HIDDEN;
            break;
          case 'style':
            style = attrs[a];
            break;
          case 'itemprop':
            itemprop = attrs[a];
            break;
          case 'itemtype':
            itemtype = attrs[a];
            break;
          case 'aria-label':
            label = attrs[a];
            break;
          // SPAs name parts in test hooks instead of classes ("data-testid=product-price").
          case 'data-testid':
          case 'data-test':
          case 'data-qa-id':
          case 'data-hook':
            hook ??= attrs[a];
            break;
        }
      }
      if (style) {
        if (/line-through/i.test(style)) ctx |= C_STRUCK;
        if (/display\s*:\s*none|visibility\s*:\s*hidden/i.test(style)) ctx |= C_HIDDEN;
      }
      if (tag === 'form') {
        const action = attrs.action ?? '';
        if (/cart\/add|basket\/add|add-?to-?cart|addtocart|warenkorb/i.test(action)) ctx |= C_FORM;
      }

      const k = cls || id || hook ? classKinds(hook === undefined ? cls : `${cls ?? ''} ${hook}`, id) : 0;
      if (k) {
        if (k & K_PRICE) marks |= M_PRICE;
        if (k & K_OLD) marks |= M_OLD;
        if (k & K_CURRENT) marks |= M_CURRENT;
        if (k & K_HIDDEN) ctx |= C_HIDDEN;
        if (k & K_CHROME && !(ctx & C_MAINTAG)) ctx |= C_CHROME;
        if (k & K_CART && tag !== 'form') ctx |= C_CART;
        if (k & K_OTHERS) ctx |= C_OTHERS | SETS_OTHERS;
        if (k & K_TERMS) ctx |= C_TERMS;
        if (k & K_EXTAX) ctx |= C_EXTAX;
        if (k & K_MAINLIKE) ctx |= C_MAINLIKE;
        if (k & K_FORM && tag === 'form') ctx |= C_FORM;
      }
      if (itemprop) {
        if (/(?:^|\s)(?:price|lowPrice)(?:\s|$)/.test(itemprop)) marks |= M_PRICE | M_ITEMPROP;
        if (/(?:^|\s)itemListElement(?:\s|$)/.test(itemprop)) ctx |= C_OTHERS | SETS_OTHERS;
      }
      if (itemtype && /ListItem|ItemList/.test(itemtype)) ctx |= C_OTHERS | SETS_OTHERS;
      if (label) {
        const l = label.toLowerCase();
        if (PRICE_WORD.test(l)) marks |= M_PRICE | M_ARIA;
        if (/(?<![\p{L}])(?:was|original|regular|old|compare|before|uvp|statt|list)(?![\p{L}])/u.test(l))
          marks |= M_OLD;
        else if (marks & M_ARIA && /(?<![\p{L}])(?:sale|current|now|final|special)(?![\p{L}])/u.test(l))
          marks |= M_CURRENT;
      }
      // "price__badge--sold-out", "product-availability": a stock message, not a price.
      // Badges ("price__badge-sold-out") sit in every page of some themes, shown by CSS: not a message.
      const stock = k & K_STOCK && !(marks & M_ITEMPROP) && !(k & K_BADGE);
      if (stock) marks = 0;
      if (marks & M_OLD) ctx |= C_OLDBOX;
      else if (marks & M_PRICE) ctx |= C_PRICEBOX;

      const othersUid = ctx & SETS_OTHERS ? uid : parent?.othersUid;
      ctx &= ~SETS_OTHERS;
      const f = pushFrame(tag, attrs, nth, ctx, othersUid, marks);

      const hiddenOrChrome = ctx & C_HIDDEN;
      if (hiddenOrChrome) return;
      if (stock) {
        if (result.stock.length < MAX_STOCK) result.stock.push(keep(node(f, {})));
      } else if ((marks & (M_PRICE | M_OLD) || tag === 'del' || tag === 's' || tag === 'strike') && room(ctx)) {
        result.prices.push(keep(node(f, {})));
      }
      if (tag === 'h1' && !result.h1 && !(ctx & (C_CHROME | C_CART))) result.h1 = node(f, {});
      // A <div> or <span> scripted as the buy button ("<div class=\"aa_buy\">Купить</div>"): its short label decides.
      if (
        (tag === 'div' || tag === 'span') &&
        k & (K_BUY | K_BUYISH) &&
        !(ctx & (C_CHROME | C_CART)) &&
        ownRegion(ctx, othersUid) &&
        roomForButton()
      ) {
        result.buttons.push(keep(node(f, { disabled: /(?:^|\s)disabled(?:\s|$)/.test(cls ?? ''), buy: false })));
      } else if (
        (tag === 'button' || tag === 'input' || tag === 'a') &&
        !(ctx & (C_CHROME | C_CART)) &&
        ownRegion(ctx, othersUid) &&
        roomForButton()
      ) {
        const type = (attrs.type ?? '').toLowerCase();
        const named = k & K_BUY || (attrs.name !== undefined && BUY_WORD.test(attrs.name.toLowerCase()));
        const buyish =
          named ||
          attrs.name === 'add' ||
          (ctx & C_FORM && (tag === 'button' || type === 'submit')) ||
          (tag === 'a' && BUY_HREF.test(attrs.href ?? ''));
        // A link styled as a button lets its label decide ("Aggiungi al carrello", "Kupi").
        const linkButton =
          tag === 'a' &&
          (attrs.role === 'button' || k & K_BUYISH || /(?:^|[\s_-])(?:btn|button|cta)(?:$|[\s_-])/i.test(cls ?? ''));
        if (tag === 'a' ? buyish || linkButton : tag === 'button' || type === 'submit' || type === 'button' || buyish) {
          const disabled =
            attrs.disabled !== undefined ||
            attrs['aria-disabled'] === 'true' ||
            /(?:^|\s)disabled(?:\s|$)/.test(cls ?? '');
          result.buttons.push(keep(node(f, { disabled, buy: !!buyish })));
        }
      }
      return made.length ? made : undefined;
    },
    text(data) {
      if (skipped || done) return;
      const f = depth > 0 ? stack[depth - 1] : undefined;
      if (!f || f.ctx & (C_HIDDEN | C_CHROME)) return;
      if (chunks.length < MAX_CHUNKS) chunks.push(data);
      if (f.ctx & (C_PRICEBOX | C_OLDBOX)) {
        run = undefined;
        return;
      }
      if (BLANK.test(data)) {
        if (run) run.text += data;
        return;
      }
      const digit = DIGIT.test(data);
      // Short pieces only: a price split over elements, or a stock statement.
      const short = data.length <= 40;
      const numeric = short && digit && NUMERIC.test(data);
      const currency = (short || digit) && data.length <= 200 && currencyish(data);
      if (run && (numeric || (currency && !digit)) && extend(run, f, data, numeric, currency)) return;
      run = undefined;
      if (short && (numeric || currency)) {
        run = {
          text: data,
          chain: chainTo(depth),
          seq,
          at: chunks.length,
          ctx: f.ctx,
          othersUid: f.othersUid,
          digit,
          currency,
          pieces: 1,
          boundary: boundaries,
        };
        if (digit && currency && room(f.ctx)) result.prices.push((run.node = node(f, { text: data })));
      } else if (digit && currency && room(f.ctx)) result.prices.push(node(f, { text: data }));
      else if (
        !digit &&
        data.length <= MAX_STOCK_TEXT &&
        stockTexts < MAX_STOCK_TEXTS &&
        !(f.ctx & C_CART) &&
        ownRegion(f.ctx, f.othersUid) &&
        availabilityFromText(data)
      ) {
        // "En Stock" in a plain <p>: a stock statement without a class saying so.
        stockTexts++;
        result.stock.push(node(f, { text: data }));
      }
    },
    close() {
      if (skipped) {
        skipped--;
        return;
      }
      if (depth === 0 || done) return;
      const f = stack[--depth] as VFrame;
      if (f.block) {
        chunks.push(' ');
        boundaries++;
      }
      // An ancestor of the title closing may be the product block (see PAST_BLOCK).
      const h1 = result.h1;
      if (h1 && stopAt === Infinity && h1.chain[depth] === f.uid && depth >= 2) {
        const button = buyButton(result.buttons, h1);
        if (button && button.chain[depth] === f.uid && button.chain.length > depth) {
          const shared =
            h1.chain.length > depth + 1 &&
            button.chain.length > depth + 1 &&
            h1.chain[depth + 1] === button.chain[depth + 1];
          if (!shared) stopAt = Math.max(seq + PAST_BLOCK, button.seq + PAST_BUTTON, h1.seq + PAST_TITLE);
        }
      }
    },
  };
}
