/** Stock states as schema.org, Open Graph and shop platforms write them. */
export type Availability = 'in_stock' | 'out_of_stock' | 'preorder' | 'unknown';

const SCHEMA: Readonly<Record<string, Exclude<Availability, 'unknown'>>> = {
  instock: 'in_stock',
  limitedavailability: 'in_stock',
  onlineonly: 'in_stock',
  instoreonly: 'in_stock',
  availablefororder: 'in_stock',
  available: 'in_stock',
  outofstock: 'out_of_stock',
  soldout: 'out_of_stock',
  discontinued: 'out_of_stock',
  oos: 'out_of_stock',
  unavailable: 'out_of_stock',
  preorder: 'preorder',
  presale: 'preorder',
  // Orderable now, shipped later: closest to a pre-order for someone watching stock.
  backorder: 'preorder',
  onbackorder: 'preorder',
  availableonbackorder: 'preorder',
};

/**
 * Reads a structured availability value: schema.org URLs or names ("https://schema.org/InStock",
 * "schema:OutOfStock", "PreOrder"), Open Graph ("in stock", "out of stock", "preorder",
 * "available for order") and WooCommerce classes ("instock", "outofstock", "onbackorder").
 */
export function availabilityFromValue(value: unknown): Exclude<Availability, 'unknown'> | undefined {
  if (typeof value !== 'string') return undefined;
  const last = value.trim().split(/[/#:]/).pop() ?? '';
  return SCHEMA[last.toLowerCase().replace(/[^a-z]/g, '')];
}

const SOLD_OUT =
  /(?<![\p{L}])(?:sold out|out of stock|currently unavailable|unavailable|not available|ausverkauft|nicht (?:verfügbar|lieferbar|auf lager)|vergriffen|épuisé|rupture de stock|indisponible|agotado|sin stock|esgotado|indisponível|sem estoque|niedostępny|wyprzedan[ya]|brak w magazynie|esaurito|non disponibile|uitverkocht|slutsåld|utsolgt|udsolgt|vyprodáno|品切れ|在庫切れ|売り切れ|完売|нет в наличии|распродано|закончился|немає в наявності|tükendi|stokta yok)(?![\p{L}])/iu;
const PREORDER = /(?<![\p{L}])(?:pre-?order|vorbestellen|vorbestellung|précommander|précommande|reservar|pré-venda|przedsprzedaż|予約|предзаказ)(?![\p{L}])/iu;
const BUYABLE =
  /(?<![\p{L}])(?:add to (?:cart|bag|basket)|buy now|in den warenkorb|jetzt kaufen|ajouter au panier|añadir al carrito|adicionar ao carrinho|comprar|dodaj do koszyka|kup teraz|aggiungi al carrello|in winkelwagen|カートに入れる|カートに追加|購入|acheter|kaufen|в корзину|купить|add to trolley|sepete ekle)(?![\p{L}])/iu;

/** What a button's label says: sold out, pre-order, or buy (add to cart). */
export function buttonLabelKind(label: string): 'sold_out' | 'preorder' | 'buy' | undefined {
  if (SOLD_OUT.test(label)) return 'sold_out';
  if (PREORDER.test(label)) return 'preorder';
  if (BUYABLE.test(label)) return 'buy';
  return undefined;
}

/** Reads an add-to-cart button's label: "Sold out" / "Ausverkauft" / "Pre-order" / "Add to cart". */
export function availabilityFromButton(label: string, disabled: boolean): Exclude<Availability, 'unknown'> | undefined {
  const kind = buttonLabelKind(label);
  if (kind === 'sold_out') return 'out_of_stock';
  if (kind === 'preorder') return 'preorder';
  if (kind === 'buy') return disabled ? undefined : 'in_stock';
  return undefined;
}

/** Reads a stock message ("In stock", "Out of stock", "Nur noch 3 auf Lager"). */
export function availabilityFromText(text: string): Exclude<Availability, 'unknown'> | undefined {
  if (SOLD_OUT.test(text)) return 'out_of_stock';
  if (PREORDER.test(text) || /backorder/i.test(text)) return 'preorder';
  if (/(?<![\p{L}])(?:in stock|available|auf lager|lieferbar|verfügbar|en stock|disponible|em estoque|dostępny|在庫あり|в наличии|disponibile|op voorraad|på lager|na stanie|sofort lieferbar)(?![\p{L}])/iu.test(text)) {
    return 'in_stock';
  }
  return undefined;
}

export function inStockOf(a: Availability | undefined): boolean | undefined {
  return a === 'in_stock' ? true : a === 'out_of_stock' || a === 'preorder' ? false : undefined;
}
