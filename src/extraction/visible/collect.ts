/**
 * What the visible-price finder needs from the page, gathered during the scanner's one streaming
 * pass (scan.ts calls open/text/close in step with its own stack): price-marked elements and
 * price-like text, stock messages, the product title, the buy buttons, each with the region it
 * stands in (header, cart, carousel, struck-through...), its ancestors and a CSS path.
 */
type Attrs = Record<string, string>;

/** An element whose visible text the scanner captures (its Captured): text is set when it closes. */
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
  marks: number;
  /** Marks of the nearest price-marked ancestors (up to three levels up). */
  boxMarks: number;
  path: string;
  tag: string;
  /** A captured element (text filled when it closes), or a text node's text. */
  el?: Captured;
  text?: string;
  disabled?: boolean;
  /** A button whose class, id or form marks it as the add-to-cart button (else its label decides). */
  buy?: boolean;
  /** Texts of the two nearest blocks around the node, innermost first, for the evidence snippet (filled at close). */
  around: Array<{ text: string }>;
}

export interface VisibleScan {
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
  marks: number;
  kids?: Map<string, number>;
  /** Open block collecting text for snippets of the nodes inside it. */
  around?: { parts: string[]; length: number; box: { text: string } };
}

const MAX_PRICES = 300;
const MAX_STOCK = 20;
const MAX_BUTTONS = 20;
const MAX_SNIPPET = 240;

// Class and id words, matched on "class id" lower-cased with camelCase split ("oldPrice" -> "old-price").
const PRICE_WORD = /price|preis|prix|precio|prezzo|pre[cç]o|(?<![a-z])(?:cena|cijena|kaina|hinta|pris|prijs|fiyat|harga|gia|amount|цена|ціна)(?![a-z])/;
const CURRENT_WORD = /(?<![a-z])(?:sale|current|now|final|special|offer|promo|deal|actual|selling|our|reduced|aktion|angebot|nuevo)(?![a-z]{2})/;
const OLD_WORD =
  /(?<![a-z])(?:old|was|compare|compare-at|rrp|uvp|msrp|srp|strike|striked|strikethrough|crossed|before|original|retail|list|streich|barre|ancien|tachado|anterior|previous|reference|regular-price-old)(?:-?(?:price|preis|prix|precio|amount)|(?![a-z]))/;
const STOCK_WORD = /(?<![a-z])(?:stock|availability|available|inventory|lager|verfuegbar|lieferbar|dispo\w*|disponib\w*|sold-?out|soldout|out-of-stock|nalichi\w*|preorder|pre-order)(?![a-z])/;
const CHROME_TOKEN = /^(?:header|footer|site-header|site-footer|page-footer|navbar|nav|navigation|menu|main-menu|mega-?menu|breadcrumbs?|top-?bar|announcement)(?:$|[-_])/;
const CART_TOKEN =
  /^(?:(?:mini|side|header|top|drawer|flyout|offcanvas|floating|nav)[-_]?(?:cart|basket|bag)|(?:cart|basket|bag)[-_]?(?:drawer|dropdown|popup|preview|summary|totals?|widget|count|flyout|sidebar|items?|contents?|subtotal|overlay|modal|panel|notification|popover)|minicart|cart)$/;
const OTHERS_WORD =
  /(?<![a-z])(?:carousel|slider|swiper|slick|glide|splide|related|recommend\w*|empfehlung\w*|upsells?|up-sells?|cross-?sells?|crosssell|similar|recently|also|bestsellers?|accessories|product-(?:grid|list|tile|card|item|items|recommendations|slider)|products|product-cards?|listing|teaser|bundle)(?![a-z])/;
const TERMS_WORD =
  /(?<![a-z])(?:shipping|delivery|versand\w*|livraison|envio|frete|installments?|instalments?|klarna|afterpay|affirm|paypal|financ\w*|monthly|raten\w*|sezzle|bnpl|payment-plan|loyalty|points|unit-price|base-price|grundpreis|price-per\w*|per-unit|savings?|save|you-save|discount-amount|coupon|tax|vat|mwst|deposit|pfand)(?![a-z])/;
const MAINLIKE_WORD =
  /(?<![a-z])(?:product-(?:main|info|information|detail|details|single|page|view|essential|summary|hero|buy|purchase|form|top|core|overview)|pdp|pdp-\w+|buybox|buy-box|product__info|productview|product-view|entry-summary|summary|product-info-main|ad-?view|vip|listing-detail)(?![a-z])/;
const BUY_WORD = /add[-_ ]?to[-_ ]?(?:cart|bag|basket)|addtocart|buy[-_]?now|buy[-_]?button|btn-cart|tocart|product-form__submit|single_add_to_cart_button|warenkorb|panier/;

function words(cls: string | undefined, id: string | undefined): string {
  const s = `${cls ?? ''} ${id ?? ''}`;
  return s.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
}

function segment(f: VFrame): string {
  const id = f.attrs.id;
  if (id && /^[A-Za-z][\w-]*$/.test(id)) return `#${id}`;
  const cls = (f.attrs.class ?? '').trim().split(/\s+/)[0];
  const c = cls && /^[A-Za-z_][\w-]*$/.test(cls) ? `.${cls}` : '';
  return `${f.tag}${c}:nth-of-type(${f.nth})`;
}

export interface Collector {
  open(tag: string, attrs: Attrs, cls: string | undefined, id: string | undefined, capture: () => Captured): void;
  text(data: string): void;
  close(): void;
  result: VisibleScan;
}

const DIGIT = /\d/;
/** A currency sign or code next to a digit: worth reading as a price when not price-marked. */
const CURRENCYISH = /[$€£¥₹₽₩₺₴₫₪฿₱₦₡₲₵₸₼₾zł]|\b(?:kr|Kč|Ft|lei|лв|руб|грн|R\$|CHF|EUR|USD|GBP|SEK|NOK|DKK|PLN|CZK|HUF|RON|BRL|MXN|CAD|AUD|NZD|JPY|CNY|INR|RUB|TRY|ZAR|AED|SAR|ARS|CLP|COP|PEN|UAH)\b/u;

export function createCollector(): Collector {
  const result: VisibleScan = { prices: [], stock: [], buttons: [] };
  const stack: VFrame[] = [];
  const rootKids = new Map<string, number>();
  let uid = 0;
  let seq = 0;

  const node = (f: VFrame, extra: Partial<VisibleNode>): VisibleNode => {
    let boxMarks = 0;
    for (let i = stack.length - 2, n = 0; i >= 0 && n < 3; i--, n++) boxMarks |= (stack[i] as VFrame).marks;
    const around = nearestBlocks();
    return {
      seq: seq,
      chain: stack.map((s) => s.uid),
      ctx: f.ctx,
      marks: f.marks,
      boxMarks,
      path: cssPath(),
      tag: f.tag,
      around,
      ...extra,
    };
  };
  const nearestBlocks = (): Array<{ text: string }> => {
    const out: Array<{ text: string }> = [];
    for (let i = stack.length - 1; i >= 0 && out.length < 2; i--) {
      const a = (stack[i] as VFrame).around;
      if (a) out.push(a.box);
    }
    return out;
  };
  // From the nearest ancestor with an id, else from <body>.
  const cssPath = (): string => {
    const parts: string[] = [];
    for (let i = stack.length - 1; i >= 0; i--) {
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

  return {
    result,
    open(tag, attrs, cls, id, capture) {
      const parent = stack[stack.length - 1];
      const kids = parent ? (parent.kids ??= new Map()) : rootKids;
      const nth = (kids.get(tag) ?? 0) + 1;
      kids.set(tag, nth);
      let ctx = (parent?.ctx ?? 0) & ~C_PRICEBOX & ~C_OLDBOX;
      if (parent && parent.ctx & (C_PRICEBOX | C_OLDBOX)) ctx |= parent.ctx & (C_PRICEBOX | C_OLDBOX);
      let marks = 0;
      seq++;

      if (tag === 'del' || tag === 's' || tag === 'strike') ctx |= C_STRUCK;
      else if (tag === 'script' || tag === 'style' || tag === 'noscript' || tag === 'template' || tag === 'head' || tag === 'title') ctx |= C_HIDDEN;
      else if (tag === 'main' || tag === 'article') ctx |= C_MAINLIKE | C_MAINTAG;
      else if ((tag === 'header' || tag === 'footer' || tag === 'nav') && !(ctx & C_MAINTAG)) ctx |= C_CHROME;
      else if (tag === 'aside' && !MAINLIKE_WORD.test(words(cls, id))) ctx |= C_OTHERS;
      if (attrs.hidden !== undefined || attrs['aria-hidden'] === 'true') ctx |= C_HIDDEN;
      const style = attrs.style;
      if (style) {
        if (/line-through/i.test(style)) ctx |= C_STRUCK;
        if (/display\s*:\s*none|visibility\s*:\s*hidden/i.test(style)) ctx |= C_HIDDEN;
      }
      if (tag === 'form') {
        const action = attrs.action ?? '';
        if (/cart\/add|basket\/add|add-?to-?cart|addtocart|warenkorb/i.test(action)) ctx |= C_FORM;
        else if (/\/(?:cart|basket|checkout)(?:$|[/?])/i.test(action)) ctx |= C_CART;
      }

      const itemprop = attrs.itemprop;
      const label = attrs['aria-label'];
      if (cls || id) {
        const w = words(cls, id);
        if (PRICE_WORD.test(w)) marks |= M_PRICE;
        if (OLD_WORD.test(w)) marks |= M_OLD;
        else if (marks & M_PRICE && CURRENT_WORD.test(w)) marks |= M_CURRENT;
        if (/(?:^|\s)(?:sr-only|screen-reader-text|visually-hidden|visuallyhidden|hidden|d-none|a11y-hidden)(?=\s|$)/.test(w)) ctx |= C_HIDDEN;
        for (const token of w.split(/\s+/)) {
          if (CHROME_TOKEN.test(token) && !(ctx & C_MAINTAG)) ctx |= C_CHROME;
          if (CART_TOKEN.test(token) && tag !== 'form') ctx |= C_CART;
        }
        if (OTHERS_WORD.test(w) && !MAINLIKE_WORD.test(w)) ctx |= C_OTHERS;
        if (TERMS_WORD.test(w)) ctx |= C_TERMS;
        if (MAINLIKE_WORD.test(w)) ctx |= C_MAINLIKE;
        if (tag === 'form' && /add-?to-?cart|product-form|cart-form|buy-form|product_addtocart/.test(w)) ctx |= C_FORM;
        if (STOCK_WORD.test(w) && !(marks & M_PRICE) && result.stock.length < MAX_STOCK) {
          // Filled in below, once the frame exists.
          marks |= 64;
        }
      }
      if (itemprop) {
        if (/(?:^|\s)(?:price|lowPrice)(?:\s|$)/.test(itemprop)) marks |= M_PRICE | M_ITEMPROP;
        if (/(?:^|\s)itemListElement(?:\s|$)/.test(itemprop)) ctx |= C_OTHERS;
      }
      if (attrs.itemtype && /ListItem|ItemList/.test(attrs.itemtype)) ctx |= C_OTHERS;
      if (label) {
        const l = label.toLowerCase();
        if (PRICE_WORD.test(l)) marks |= M_PRICE | M_ARIA;
        if (/(?<![\p{L}])(?:was|original|regular|old|compare|before|uvp|statt|list)(?![\p{L}])/u.test(l)) marks |= M_OLD;
        else if (marks & M_ARIA && /(?<![\p{L}])(?:sale|current|now|final|special)(?![\p{L}])/u.test(l)) marks |= M_CURRENT;
      }
      if (marks & M_OLD) ctx |= C_OLDBOX;
      else if (marks & M_PRICE) ctx |= C_PRICEBOX;

      const f: VFrame = { uid: uid++, tag, attrs, nth, ctx, marks: marks & 31 };
      if (tag === 'div' || tag === 'section' || tag === 'li' || tag === 'p' || tag === 'td' || tag === 'form' || tag === 'article' || tag === 'dd') {
        f.around = { parts: [], length: 0, box: { text: '' } };
      }
      stack.push(f);

      const hiddenOrChrome = ctx & C_HIDDEN;
      if (hiddenOrChrome) return;
      if ((marks & (M_PRICE | M_OLD) || tag === 'del' || tag === 's' || tag === 'strike') && result.prices.length < MAX_PRICES) {
        result.prices.push(node(f, { el: capture() }));
      } else if (marks & 64) {
        result.stock.push(node(f, { el: capture() }));
      }
      if (tag === 'h1' && !result.h1 && !(ctx & (C_CHROME | C_OTHERS | C_CART))) result.h1 = node(f, {});
      if ((tag === 'button' || tag === 'input' || tag === 'a') && result.buttons.length < MAX_BUTTONS && !(ctx & (C_CHROME | C_OTHERS | C_CART))) {
        const type = (attrs.type ?? '').toLowerCase();
        const w = words(cls, id) + ` ${(attrs.name ?? '').toLowerCase()}`;
        const buyish = BUY_WORD.test(w) || attrs.name === 'add' || (ctx & C_FORM && (tag === 'button' || type === 'submit'));
        if (tag === 'a' ? BUY_WORD.test(w) : tag === 'button' || type === 'submit' || type === 'button' || buyish) {
          const disabled = attrs.disabled !== undefined || attrs['aria-disabled'] === 'true' || /(?:^|\s)disabled(?:\s|$)/.test(cls ?? '');
          result.buttons.push(node(f, { el: capture(), disabled, buy: !!buyish }));
        }
      }
    },
    text(data) {
      const f = stack[stack.length - 1];
      if (!f || f.ctx & C_HIDDEN) return;
      for (let i = stack.length - 1; i >= 0; i--) {
        const a = (stack[i] as VFrame).around;
        if (a) {
          if (a.length < MAX_SNIPPET * 2) {
            a.parts.push(data);
            a.length += data.length;
          }
          break;
        }
      }
      if (f.ctx & (C_PRICEBOX | C_OLDBOX) || result.prices.length >= MAX_PRICES) return;
      if (!DIGIT.test(data) || data.length > 200 || !CURRENCYISH.test(data)) return;
      result.prices.push(node(f, { text: data }));
    },
    close() {
      const f = stack.pop();
      if (!f?.around) return;
      const text = f.around.parts.join('').replace(/\s+/g, ' ').trim();
      f.around.box.text = text;
      // The block's text is part of the block around it.
      if (text) {
        for (let i = stack.length - 1; i >= 0; i--) {
          const a = (stack[i] as VFrame).around;
          if (a) {
            if (a.length < MAX_SNIPPET * 2) {
              a.parts.push(` ${text} `);
              a.length += text.length;
            }
            break;
          }
        }
      }
    },
  };
}
