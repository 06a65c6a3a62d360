/**
 * What a class or id says about an element, in the form the finder reads it ("class id",
 * lower-cased, camelCase split: "oldPrice" -> "old-price"), and the one list of words that name
 * an old price: the visible-price finder marks such elements old, and every element's visible
 * text leaves them out (text.ts), so the two can never disagree about "barred" or "price-old".
 */

export function classWords(cls: string | undefined, id: string | undefined): string {
  const s = `${cls ?? ''} ${id ?? ''}`;
  return (/[A-Z]/.test(s) ? s.replace(/([a-z])([A-Z])/g, '$1-$2') : s).toLowerCase();
}

export const OLD_PRICE_WORD =
  /(?<![a-z])(?<!with-|has-)(?:(?:old|was|compare|compare-at|rrp|uvp|msrp|srp|strike|striked|strikethrough|crossed|original|streich|barre|barred|barrato|pieno|ancien|tachado|anterior|previous)(?:-?(?:price|preis|prix|precio|amount)|(?![a-z]))|(?:list|before|retail|regular|reference|secondary|full|initial|usual|normal|recommended|suggested)-?(?:price|preis|prix|precio))|price-?(?:old|was|before|orig\w*|strike\w*|crossed|barred|initial|full)(?![a-z])/;
