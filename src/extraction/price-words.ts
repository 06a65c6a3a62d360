/**
 * The words around a number that say what it is: an old or current price, a starting price, a
 * saving, an instalment, a multi-buy, a unit price, a price per piece or per period, or one end
 * of a range. Matched on normalised text (NFKC, single spaces), case-insensitively.
 */

const W = (words: readonly string[]): string => `(?<![\\p{L}])(?:${words.join('|')})(?![\\p{L}])`;

export const OLD_WORDS = W([
  'was',
  'were',
  'regular price',
  'regular',
  'reg\\.?',
  'original price was',
  'original price',
  'orig\\.?',
  'list price',
  'before',
  'previously',
  'compare at',
  'rrp',
  'msrp',
  'srp',
  'uvp',
  'statt',
  'vorher',
  'bisher',
  'ursprünglich',
  'streichpreis',
  'avant',
  'au lieu de',
  'prix barré',
  'prix initial',
  'antes',
  'precio anterior',
  'de',
  'era',
  'zamiast',
  'poprzednio',
  'przed',
  'cena regularna',
  'cena katalogowa',
  'van',
  'oude prijs',
  'voorheen',
  'adviesprijs',
  'běžná cena',
  'bežná cena',
  'původní cena',
  'pôvodná cena',
  'eredeti ár',
  'régi ár',
  'preț vechi',
  'pret vechi',
  'старая цена',
  'стара ціна',
  'стара цена',
  'было',
  'eski fiyat',
  'piyasa fiyatı',
  'ordinarie pris',
  'ord\\. pris',
  'normalpris',
  'tidligere',
  'før',
  'invece di',
  'prezzo di listino',
  'prezzo consigliato',
  'prima',
  'preço anterior',
  'normaalihinta',
  'παλιά τιμή',
  'αρχική τιμή',
  'harga normal',
  'giá gốc',
  'ราคาปกติ',
  'السعر الأصلي',
  'מחיר קודם',
  '通常価格',
  '定価',
  '参考価格',
  'メーカー希望小売価格',
  '元の価格',
  '原价',
  '原價',
  '정가',
  // An auction's estimate and starting price are not what the lot sells for now.
  'estimate',
  'estimated',
  'est\\.',
  'schätzpreis',
  'schätzwert',
  'schätzung',
  'estimation',
  'stima',
  'estimación',
  'estimativa',
  'wycena',
  'оценка',
  'starting bid',
  'opening bid',
  'starting price',
  'startpreis',
  'startgebot',
  'mindestgebot',
  'mise à prix',
  'prix de départ',
  'prezzo di partenza',
  "base d'asta",
  'precio de salida',
  'cena wywoławcza',
  'стартовая цена',
]);

export const CURRENT_WORDS = W([
  'now',
  'sale price',
  'sale',
  'our price',
  'your price',
  'price now',
  'special price',
  'offer price',
  'deal',
  'current price is',
  'current price',
  'jetzt',
  'nur',
  'aktionspreis',
  'angebot',
  'sonderpreis',
  'maintenant',
  'prix promo',
  'promo',
  'désormais',
  'ahora',
  'oferta',
  'por',
  'agora',
  'teraz',
  'promocja',
  'cena promocyjna',
  'nu',
  'voor',
  'ora',
  'naše cena',
  'naša cena',
  'akční cena',
  'akciós ár',
  'preț redus',
  'новая цена',
  'şimdi',
  'indirimli fiyat',
  'nå',
  'tilbud',
  'tarjous',
  'giá bán',
  'harga promo',
  'السعر الحالي',
  'מחיר מבצע',
  '特価',
  'セール価格',
  '販売価格',
  '现价',
  '特价',
  '售价',
  '할인가',
  '판매가',
  'current bid',
  'high bid',
  'highest bid',
  'winning bid',
  'aktuelles gebot',
  'höchstgebot',
  'enchère actuelle',
  'offerta attuale',
  'offerta corrente',
  'puja actual',
  'aktualna oferta',
  'текущая ставка',
]);

export const FROM_BEFORE = W([
  'from',
  'starting at',
  'starting from',
  'starts at',
  'as low as',
  'ab',
  'à partir de',
  'dès',
  'desde',
  'a partir de',
  'od',
  'vanaf',
  'da',
  'a partire da',
  'från',
  'fra',
  'от',
  'від',
]);
export const FROM_AFTER = /^\s*(?:から|起|~|and up|\+|alkaen|부터)(?![\p{L}])/u;

export const SAVE_BEFORE = W([
  'save',
  'you save',
  'saving',
  'savings',
  'sie sparen',
  'sparen sie',
  'ersparnis',
  'sparen',
  'spare',
  'économisez',
  'économie',
  'ahorra',
  'ahorras',
  'ahorro',
  'economize',
  'economia',
  'oszczędzasz',
  'oszczędź',
  'rabatt',
  'discount',
  'ušetříte',
  'risparmi',
  'risparmio',
  'экономия',
  'вы экономите',
  'скидка',
  'знижка',
  'indirim',
  'du sparer',
  'spar',
  'kazancın',
  'kazancınız',
  'kazanç',
  'giảm',
  'tiết kiệm',
  'חיסכון',
  'חסכון',
  'הנחה',
  'توفير',
  'خصم',
]);
export const SAVE_AFTER = /^\s*(?:off|rabatt|お得|割引)(?![\p{L}])/iu;
/** Chinese, Japanese and Korean savings, written without spaces around them ("現省$400", "立省 ¥20"). */
export const SAVE_CJK_BEFORE = /(?:省下?|節省|节省|立省|現省|现省|お得|割引|할인)\s*[:：]?\s*$/u;
/** "每組990元", "每包 $99": a price per set, pack or box, not the product's price. */
export const PER_CJK_BEFORE = /每\s*\p{Script=Han}{1,2}\s*[:：]?\s*$/u;

const TAX = [
  'vat',
  'v\\.a\\.t\\.?',
  'tax',
  'taxes',
  'mwst\\.?',
  'must\\.?',
  'ust\\.?',
  'steuern?',
  'tva',
  'iva',
  'btw',
  'moms',
  'mva',
  'dph',
  'ddv',
  'pdv',
  'áfa',
  'afa',
  'alv',
  'φπα',
  'ндс',
  'пдв',
  'ддс',
  'kdv',
  'gst',
  'pvm',
  'pvn',
  'käibemaksu?',
  'impuestos?',
  'imposte',
  'impostos?',
  'taxas',
].join('|');
const WITHOUT = [
  'excl\\.?',
  'exkl\\.?',
  'excluding',
  'exclusive of',
  'exc\\.?',
  'ex\\.?',
  'ohne',
  'zzgl\\.?',
  'zuzüglich',
  'plus',
  '\\+',
  'hors',
  'sans',
  'sin',
  'sem',
  'senza',
  'bez',
  'brez',
  'без',
  'без учета',
  'ilman',
  'utan',
  'uden',
  'uten',
  'zonder',
  'fără',
  'nélkül',
  'be',
].join('|');
/** The price without VAT: "24,71 € exkl. MwSt.", "Brez DDV: 36.53€", "Prix HT", "cena netto". */
// Not when a colon follows: "40,00 € Brez DDV: 36,53 €" labels the next price, not this one.
export const EX_TAX_AFTER = new RegExp(
  `^\\s*\\(?\\s*(?:(?:${WITHOUT})\\s*(?:${TAX})(?![\\p{L}])|(?:ht|h\\.t\\.|netto|nettó|net of tax)(?![\\p{L}])|(?:${TAX})\\s*(?:excl\\.?|exkl\\.?|esclusa|excluida|exclue|nélkül|hariç|ei sisälly)(?![\\p{L}]))\\.?(?!\\s*[:：])`,
  'iu',
);
export const EX_TAX_BEFORE = new RegExp(
  `(?<![\\p{L}])(?:(?:${WITHOUT})\\s*(?:${TAX})|(?:prix |preis |cena |price |pris )?(?:ht|netto|nettó|net price|nettopreis))\\.?\\s*[:：]?\\s*$`,
  'iu',
);
/** The whole text says the thing is free ("Free!", "Gratis", "Kostenlos"): a price of zero. */
export const FREE_TEXT =
  /^(?:free|gratis|kostenlos|gratuit|gratuite|gratuito|grátis|bezpłatnie|zdarma|ingyenes|ücretsiz|бесплатно|безкоштовно|免费|免費|無料|무료)\s*[!.]?$/iu;
export const OLD_AFTER = /^\s*\(?\s*(?:uvp|rrp|msrp)(?![\p{L}])/iu;

/** "/", "per", "pro", "je"... before a unit: "/kg", "per month", "pro Stück", "la pièce". */
const PER = '(?:/\\s*|(?:per|pro|par|je|za|a|al|la|le|por|по|за|в|w|na) )';
const PIECE =
  'each|ea|pc|pcs|piece|pce|unit|item|st|stk|stück|szt|ks|kus|шт|штука|штуку|бр|брой|pièce|unité|u|ud|und|unidad|pz|pezzo|stuk|adet|kpl';
const MONTH =
  'mo|mth|month|mes|mês|mese|mois|monat|miesiąc|mies|měsíc|мес|месяц|міс|місяць|kk|kuukausi|maand|månad|mån|md|bulan|bln|ay|tháng|เดือน|月|개월|월';
const YEAR = 'yr|year|annum|jahr|an|anno|año|ano|rok|год|рік|år|jaar|tahun|thn|yıl|năm|ปี|年|년';
const WEEK = 'wk|week|woche|semaine|semana|tydzień|тиждень|неделя|tuần|สัปดาห์|周|週|주';
const DAY = 'day|tag|jour|día|dia|dzień|день|ngày|วัน|天|日|일';

/** A price per piece: the piece's price is the price ("$4.99/each", "2,50 € pro Stück"). */
export const PIECE_AFTER = new RegExp(`^\\s*(?:${PER}(?:${PIECE})\\.?|each|ea\\.|apiece)(?![\\p{L}])`, 'iu');

export type Period = 'day' | 'week' | 'month' | 'year';
const PERIOD_AFTER = new RegExp(
  `^\\s*(?:${PER}(?:(${MONTH})|(${YEAR})|(${WEEK})|(${DAY}))\\.?|(monthly|mensuel|monatlich|mensual|mensile)|(yearly|annually|jährlich|annuel|anual))(?![\\p{L}])`,
  'iu',
);

/** The period a price is charged for, from the text after it ("$9.99/mo", "€ 99 per year"). */
export function periodAfter(after: string): Period | undefined {
  const m = PERIOD_AFTER.exec(after);
  if (!m) return undefined;
  if (m[1] || m[5]) return 'month';
  if (m[2] || m[6]) return 'year';
  return m[3] ? 'week' : 'day';
}

/** A number scaled by a word ("Rp269 ribu", "2 mil. Kč", "3 млн ₽", "1,5 Mio. €"): not read. */
export const MULTIPLIER_AFTER =
  /^\s*(?:ribu|rb|juta|jt|tys|tis|тыс|тис|млн|млрд|mil|mln|mld|mio|mrd|million|millions|billion|milliard|milliards|lakh|lakhs|crore|crores|bin|mille|nghìn|ngàn|triệu|tỷ|พัน|ล้าน|万|億|억|만|천|هزار|میلیون|میلیارد|ألف|مليون|مليار)\.?(?![\p{L}])/iu;

/** A unit price: "4,99 €/kg", "1,99 €/100 g", "$2.50 per lb", "12 €/m²". */
export const UNIT_AFTER =
  /^\s*(?:\/\s*(?:\d+(?:[.,]\d+)?\s*)?\p{L}|per\s|pro\s|je\s|par\s|za\s|за\s*(?:\d+(?:[.,]\d+)?\s*)?(?:кг|килограм\p{L}*|г|грам\p{L}*|л|литр\p{L}*|литър|мл|м|метр\p{L}*|м²|м2|кв\.?\s*м|км|т|тон\p{L}*)\.?(?![\p{L}])|\/\s*m[²³23])/iu;
export const UNIT_BEFORE = /=\s*$/;
export const MULTIBUY_BEFORE = /(?<![\d.,'’ʼ])\d{1,3}\s*(?:for|für|pour|por|za)\s*$/iu;
export const INSTALMENT_BEFORE =
  /(?:\d\s*x\s*(?:de|of)?\s*$|(?<![\p{L}])(?:parcelas?|cuotas?|instal(?:l)?ments?|raten?|monatlich|mensualités?)(?![\p{L}])[^\d]*$)/iu;
export const RANGE_GAP = /^\s*(?:-|–|—|~|to|bis|à|a|até|do|až|до|і|tot|till|til|al|đến|ถึง)\s*$/iu;

const compiled = new Map<string, RegExp>();

function lastMatch(re: string, text: string): { index: number; text: string } | undefined {
  let g = compiled.get(re);
  if (!g) {
    g = new RegExp(re, 'giu');
    compiled.set(re, g);
  }
  g.lastIndex = 0;
  let last: RegExpExecArray | null = null;
  for (let m = g.exec(text); m; m = g.exec(text)) last = m;
  return last ? { index: last.index, text: last[0] } : undefined;
}

export type GapRole = 'old' | 'current' | 'from' | 'save';

/** The role the nearest keyword before a number gives it ("was $20", "Save $5", "ab 9,99 €"). */
export function roleFromGap(gap: string): GapRole | undefined {
  if (!/\p{L}/u.test(gap)) return undefined;
  const lower = gap.toLowerCase();
  let best: { role: GapRole; end: number; length: number } | undefined;
  for (const [role, re] of [
    ['old', OLD_WORDS],
    ['current', CURRENT_WORDS],
    ['from', FROM_BEFORE],
    ['save', SAVE_BEFORE],
  ] as const) {
    const m = lastMatch(re, lower);
    // The keyword nearest the number wins; "à partir de" beats the "de" inside it.
    const end = m ? m.index + m.text.length : -1;
    if (m && (!best || end > best.end || (end === best.end && m.text.length > best.length))) {
      best = { role, end, length: m.text.length };
    }
  }
  return best?.role;
}
