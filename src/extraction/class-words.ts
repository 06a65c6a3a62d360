/**
 * What a class or id says about an element, read as "class id" lower-cased with camelCase split
 * ("oldPrice" -> "old-price"): a price, an old or a current one, a price without VAT, a stock
 * message, the site's chrome, a cart, a list of other products, terms, a product-detail
 * container, a form or a buy button (classKinds, for the visible-price finder). The words that
 * name an old price are one list: the finder marks such elements old, and every element's
 * visible text leaves them out (text.ts), so the two never disagree about "barred" or "price-old".
 */

export function classWords(cls: string | undefined, id: string | undefined): string {
  const s = `${cls ?? ''} ${id ?? ''}`;
  return (/[A-Z]/.test(s) ? s.replace(/([a-z])([A-Z])/g, '$1-$2') : s).toLowerCase();
}

export const OLD_PRICE_WORD =
  /(?<![a-z])(?<!with-|has-)(?:(?:old|was|compare|compare-at|rrp|uvp|msrp|srp|strike|striked|strikethrough|crossed|original|streich|barre|barred|barrato|pieno|ancien|tachado|anterior|previous)(?:-?(?:price|preis|prix|precio|amount)|(?![a-z]))|(?:list|before|retail|regular|reference|secondary|full|initial|usual|normal|recommended|suggested)-?(?:price|preis|prix|precio))|price-?(?:old|was|before|orig\w*|strike\w*|crossed|barred|initial|full)(?![a-z])/;

export const PRICE_WORD =
  /price|preis|prix|precio|prezzo|pre[cç]o|(?<![a-z])(?:cena|cijena|kaina|hinta|pris|prijs|fiyat|harga|gia|amount|цена|ціна)(?![a-z])/;
const CURRENT_WORD =
  /(?<![a-z])(?:sale|current|now|final|special|offer|promo|deal|actual|selling|our|reduced|aktion|angebot|nuevo|new)(?![a-z]{2})|price-?(?:new|now|sale|current|final)/;
const STOCK_WORD =
  /(?<![a-z])(?:stock|availability|available|inventory|lager|verfuegbar|lieferbar|dispo\w*|disponib\w*|sold-?out|soldout|out-of-stock|nalichi\w*|preorder|pre-order)(?![a-z])/;
const CHROME_TOKEN =
  /^(?:header|footer|site-header|site-footer|page-footer|navbar|nav|navigation|menu|main-menu|mega-?menu|breadcrumbs?|top-?bar|announcement)(?:$|[-_])/;
const CART_TOKEN =
  /^(?:(?:mini|side|header|top|drawer|flyout|offcanvas|floating|nav)[-_]?(?:cart|basket|bag)|(?:cart|basket|bag)[-_]?(?:drawer|dropdown|popup|preview|summary|totals?|widget|count|flyout|sidebar|items?|contents?|subtotal|overlay|modal|panel|notification|popover)|minicart|cart)$/;
const OTHERS_WORD =
  /(?<![a-z])(?:carousel|slider|swiper|slick|glide|splide|related|recommend\w*|empfehlung\w*|upsells?|up-sells?|cross-?sells?|crosssell|similar|recently|also|bestsellers?|accessories|other-sellers|sellers|fbt|frequently|product-(?:grid|list|tile|card|item|items|recommendations|slider)|products|product-cards?|listing|teaser|bundle)(?![a-z-])/;
const TERMS_WORD =
  /(?<![a-z])(?:shipping|delivery|versand\w*|livraison|envio|frete|installments?|instalments?|klarna|afterpay|affirm|paypal|financ\w*|monthly|raten\w*|sezzle|bnpl|payment-plan|loyalty|points|unit-price|base-price|grundpreis|price-per\w*|per-unit|savings?|save|you-save|discount-amount|coupon|deposit|pfand)(?![a-z])/;
/** Class words of a price without VAT ("notax", "price-excl-tax", "net-price"). */
const EX_TAX_WORD =
  /(?<![a-z])(?:(?:ex|excl|exkl|excluding|without|no|net|netto)-?(?:tax|vat|mwst)|notax|price-?net|net-?price|nettopreis|price-?excl\w*|tax-?excl\w*)(?![a-z])/;
const MAINLIKE_WORD =
  /(?<![a-z])(?:product-(?:main|info|information|detail|details|single|page|view|essential|summary|hero|buy|purchase|form|top|core|overview)|pdp|pdp-\w+|buybox|buy-box|product__info|productview|product-view|entry-summary|summary|product-info-main|ad-?view|vip|listing-detail)(?![a-z])/;
export const BUY_WORD =
  /add[-_ ]?to[-_ ]?(?:cart|bag|basket|trolley)|add[-_]?(?:cart|basket)|addtocart|addtobasket|buy[-_]?(?:now|button|btn|box-button)|(?:btn|button)[-_]?(?:cart|basket|buy|add)|(?:cart|basket)[-_]?(?:btn|button|add)|tocart|product-form__submit|single_add_to_cart_button|warenkorb|panier|carrello|koszyk|kosik|košík|kosar|sepet/;
/** Named "buy" and nothing more ("aa_buy", "buy"): a button only if its label says so. */
const BUY_LOOSE = /(?<![a-z])buy(?![a-z])/;
/** A link that adds to the cart ("/a/public/addtocart?productId=1", "/cart/add?id=1"). */
export const BUY_HREF =
  /add-?to-?(?:cart|basket|bag)|addtocart|addtobasket|(?:cart|basket|warenkorb|panier)\/add|[?&]add-to-cart=/i;

export const K_PRICE = 1;
export const K_OLD = 2;
export const K_CURRENT = 4;
export const K_HIDDEN = 8;
export const K_CHROME = 16;
export const K_CART = 32;
export const K_OTHERS = 64;
export const K_TERMS = 128;
export const K_MAINLIKE = 256;
export const K_FORM = 512;
export const K_STOCK = 1024;
export const K_BUY = 2048;
export const K_BADGE = 4096;
export const K_BUYISH = 8192;
export const K_EXTAX = 16384;

/** What an element's class and id say; pages repeat the same few hundred class strings, so it is cached. */
const classCache = new Map<string, number>();
export function classKinds(cls: string | undefined, id: string | undefined): number {
  const key = id === undefined ? (cls ?? '') : `${cls ?? ''}\u0000${id}`;
  const had = classCache.get(key);
  if (had !== undefined) return had;
  const w = classWords(cls, id);
  let k = 0;
  if (PRICE_WORD.test(w)) k |= K_PRICE;
  if (OLD_PRICE_WORD.test(w)) k |= K_OLD;
  else if (k & K_PRICE && CURRENT_WORD.test(w)) k |= K_CURRENT;
  if (
    /(?:^|\s)(?:sr-only|screen-reader-text|visually-hidden|visuallyhidden|hidden|d-none|a11y-hidden|modal)(?=\s|$)/.test(
      w,
    )
  )
    k |= K_HIDDEN;
  for (const token of w.split(/\s+/)) {
    if (CHROME_TOKEN.test(token)) k |= K_CHROME;
    if (CART_TOKEN.test(token)) k |= K_CART;
  }
  const mainlike = MAINLIKE_WORD.test(w);
  if (mainlike) k |= K_MAINLIKE;
  else if (OTHERS_WORD.test(w)) k |= K_OTHERS;
  if (TERMS_WORD.test(w)) k |= K_TERMS;
  if (EX_TAX_WORD.test(w)) k |= K_EXTAX;
  if (/add-?to-?cart|product-form|cart-form|buy-form|product_addtocart/.test(w)) k |= K_FORM;
  if (STOCK_WORD.test(w)) k |= K_STOCK;
  if (BUY_WORD.test(w)) k |= K_BUY;
  else if (BUY_LOOSE.test(w)) k |= K_BUYISH;
  if (/badge|label--|tag--/.test(w)) k |= K_BADGE;
  if (classCache.size > 10_000) classCache.clear();
  classCache.set(key, k);
  return k;
}
