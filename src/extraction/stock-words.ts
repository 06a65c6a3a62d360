/**
 * The words shops use to say whether a product can be bought now, in the languages of the pages
 * we read: stock statements ("In stock", "Ausverkauft", "Nicht auf Lager"), the labels of buy
 * buttons ("Add to cart", "Dodaj do koszyka", "Naroči") and of the buttons that replace them
 * when it cannot ("Sold out", "Notify me", "Benachrichtigen"). Data only: availability.ts reads
 * texts with them. Matched case-insensitively on whole words (no letter either side), except
 * the Chinese, Japanese and Korean ones, which are written without spaces.
 */

const words = (list: readonly string[]): string => `(?<![\\p{L}])(?:${list.join('|')})(?![\\p{L}])`;
const cjk = (list: readonly string[]): string => `(?:${list.join('|')})`;

/** Cannot be bought now: sold out, out of stock, unavailable, discontinued, notify me when back. */
export const SOLD_OUT = new RegExp(
  `${words([
    'sold out', 'out of stock', 'currently unavailable', 'temporarily unavailable', 'unavailable', 'not available',
    'no longer available', 'not in stock', 'discontinued', 'notify me', 'notify me when available', 'email me when available',
    'email when available', 'coming soon', 'available soon', 'back soon',
    'ausverkauft', 'nicht (?:mehr )?(?:verfügbar|lieferbar|auf lager|vorrätig|erhältlich)', 'derzeit nicht (?:verfügbar|lieferbar)',
    'vergriffen', 'benachrichtigen', 'benachrichtigung anfordern',
    'épuisé', 'épuisée', 'rupture de stock', 'en rupture', 'indisponible', 'non disponible', "plus disponible", 'bientôt disponible',
    "m'alerter", 'me prévenir', 'prévenez-moi',
    'agotado', 'agotada', 'sin stock', 'no disponible', 'sin existencias', 'avísame', 'próximamente',
    'esgotado', 'esgotada', 'indisponível', 'sem estoque', 'avise-me',
    'esaurito', 'esaurita', 'non disponibile', 'non più disponibile', 'avvisami', 'prossimamente',
    'niedostępny', 'niedostępna', 'niedostępne', 'wyprzedan[yae]', 'brak w magazynie', 'brak towaru', 'chwilowo niedostępny',
    'powiadom mnie', 'powiadom o dostępności',
    'uitverkocht', 'niet (?:meer )?leverbaar', 'niet op voorraad', 'tijdelijk uitverkocht',
    'slutsåld', 'slutsålt', 'ej i lager', 'inte i lager', 'utsolgt', 'ikke på lager', 'udsolgt', 'ikke på lager',
    'loppuunmyyty', 'ei saatavilla', 'ei varastossa', 'vyprodáno', 'není skladem', 'nedostupné', 'vypredané', 'nie je skladom',
    'elfogyott', 'nincs raktáron', 'nem elérhető', 'stoc epuizat', 'indisponibil', 'nu este în stoc', 'razprodano', 'ni na zalogi',
    'rasprodano', 'nije dostupno', 'nema na stanju', 'nema na zalihi', 'изчерпан', 'изчерпано', 'няма наличност',
    'нет в наличии', 'распродано', 'закончился', 'нет на складе', 'сообщить о поступлении', 'немає в наявності', 'закінчився',
    'tükendi', 'stokta yok', 'stokta bulunmamaktadır', 'εξαντλήθηκε', 'μη διαθέσιμο', 'hết hàng', 'tạm hết hàng', 'stok habis', 'habis',
    'غير متوفر', 'نفذت الكمية', 'نفد من المخزون', 'אזל מהמלאי', 'לא במלאי', 'אזל',
  ])}|${cjk(['品切れ', '在庫切れ', '売り切れ', '完売', '入荷待ち', '已售完', '售完', '缺貨', '缺货', '無庫存', '无库存', '補貨中', '补货中', '품절', '일시품절'])}`,
  'iu',
);

/** Orderable now, delivered later. */
export const PREORDER = new RegExp(
  `${words(['pre-?order', 'preorder now', 'vorbestellen', 'vorbestellung', 'précommander', 'précommande', 'reservar', 'pré-venda', 'pre-venta', 'preventa', 'przedsprzedaż', 'prenota', 'предзаказ', 'backorder', 'on backorder'])}|${cjk(['予約', '预购', '預購', '예약'])}`,
  'iu',
);

/** In stock, said in words ("In stock", "Auf Lager", "En stock", "Skladem", "Subito disponibile"). */
export const IN_STOCK = new RegExp(
  `${words([
    'in stock', 'available', 'available to ship', 'ready to ship', 'ships today', 'only \\d+ left', 'not sold',
    'auf lager', 'lieferbar', 'sofort lieferbar', 'verfügbar', 'vorrätig', 'en stock', 'disponible', 'disponibles',
    'em estoque', 'disponível', 'disponibile', 'disponibili', 'dostępny', 'dostępna', 'na stanie', 'w magazynie',
    'op voorraad', 'leverbaar', 'på lager', 'i lager', 'varastossa', 'skladem', 'na skladě', 'skladom', 'na sklade',
    'raktáron', 'készleten', 'în stoc', 'na zalogi', 'na stanju', 'na zalihi', 'в наличии', 'есть в наличии', 'в наявності',
    'є в наявності', 'на складі', 'наличност', 'stokta', 'stokta var', 'σε απόθεμα', 'còn hàng', 'tersedia', 'ready stock',
    'متوفر', 'במלאי',
  ])}|${cjk(['在庫あり', '在庫有り', '有貨', '有货', '現貨', '现货', '有庫存', '有库存', '재고 있음', '구매 가능'])}`,
  'iu',
);

/** A buy button's label: add to cart, buy now, order. */
export const BUYABLE = new RegExp(
  `${words([
    'add to (?:cart|bag|basket|trolley)', 'buy now', 'buy it now', 'order now', 'add to order',
    'in den warenkorb', 'in den einkaufswagen', 'jetzt kaufen', 'kaufen', 'bestellen',
    'ajouter au panier', 'ajouter au caddie', 'acheter', 'je commande', 'commander',
    'añadir al carrito', 'añadir a la cesta', 'agregar al carrito', 'comprar', 'adicionar ao carrinho', 'adicionar à sacola',
    'aggiungi al carrello', 'acquista', 'compra ora', 'dodaj do koszyka', 'do koszyka', 'kup teraz', 'kupuję',
    'in winkelwagen', 'in winkelmand', 'bestel', 'koop nu', 'lägg i varukorg', 'lägg i kundvagn', 'köp', 'læg i kurv',
    'legg i handlekurv', 'kjøp', 'lisää ostoskoriin', 'osta', 'do košíku', 'vložit do košíku', 'koupit', 'do košíka',
    'vložiť do košíka', 'kúpiť', 'kosárba', 'megveszem', 'adaugă în coș', 'adauga in cos', 'cumpără', 'v košarico', 'naroči',
    'kupi', 'u košaricu', 'dodaj u košaricu', 'добави в количката', 'купи', 'в корзину', 'купить', 'заказать',
    'у кошик', 'купити', 'sepete ekle', 'satın al', 'προσθήκη στο καλάθι', 'αγορά', 'thêm vào giỏ', 'mua ngay',
    'tambah ke troli', 'tambah ke keranjang', 'beli sekarang', 'أضف إلى السلة', 'أضف للسلة', 'اشتر الآن', 'הוסף לסל', 'קנה עכשיו',
  ])}|${cjk(['カートに入れる', 'カートに追加', '購入', '加入購物車', '加入购物车', '放入購物車', '立即購買', '立即购买', '直接購買', '장바구니', '구매하기', '바로구매'])}`,
  'iu',
);

/**
 * About a shop's stores, not its web shop: "Unavailable for store pickup", "Verfügbarkeit in der
 * Filiale", "Retrait en magasin". Such a message says nothing about buying online.
 */
export const STORE_ONLY = new RegExp(
  `${words([
    'store', 'stores', 'in-store', 'pick ?up', 'pickup', 'click (?:&|and) collect', 'abholung', 'abholen', 'filiale', 'filialen',
    'im markt', 'magasin', 'magasins', 'retrait', 'negozio', 'negozi', 'ritiro', 'tienda', 'tiendas', 'recogida', 'recoger',
    'loja', 'lojas', 'retirada', 'sklep', 'sklepie', 'sklepach', 'odbiór', 'winkel', 'afhalen', 'butik', 'butikk', 'myymälä',
    'prodejně', 'predajni', 'áruház', 'magazin', 'mağaza', 'магазин', 'магазине', 'магазинах', 'самовывоз', 'cửa hàng',
  ])}|${cjk(['店舗', '門市', '门店', '매장'])}`,
  'iu',
);
