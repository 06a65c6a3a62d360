/**
 * The currency signs, abbreviations and words shops write next to a number, and the ISO 4217
 * code each one means. Data only: currency.ts turns it into the matchers. Matched
 * case-sensitively as written here, and only as whole words.
 */

export interface SignInfo {
  /** The code the sign means when the page says nothing else; absent when it is ambiguous. */
  default?: string;
  /** Currencies that also write this sign; a hint among them wins over the default. */
  shared?: readonly string[];
  /**
   * The sign counts a multiple of the currency's unit: the toman (تومان) is 10 Iranian rials,
   * so "1 000 تومان" is 10 000 IRR. The amount is scaled by this power of ten.
   */
  scale?: number;
}

const DOLLARS = [
  'USD',
  'CAD',
  'AUD',
  'NZD',
  'SGD',
  'HKD',
  'MXN',
  'TWD',
  'ARS',
  'CLP',
  'COP',
  'UYU',
  'BND',
  'BSD',
  'BBD',
  'BZD',
  'BMD',
  'KYD',
  'FJD',
  'GYD',
  'JMD',
  'LRD',
  'NAD',
  'SBD',
  'SRD',
  'TTD',
  'XCD',
  'DOP',
  'CUP',
] as const;
const RUPEES = ['INR', 'PKR', 'LKR', 'NPR', 'MUR', 'SCR'] as const;
const RUBLES = ['RUB', 'BYN'] as const;
const KRONER = ['SEK', 'NOK', 'DKK', 'ISK'] as const;
const LEI = ['RON', 'MDL'] as const;

const one = (code: string): SignInfo => ({ default: code });
const shared = (code: string | undefined, all: readonly string[]): SignInfo =>
  code ? { default: code, shared: all } : { shared: all };
const each = (signs: readonly string[], info: SignInfo): Array<[string, SignInfo]> => signs.map((s) => [s, info]);

export const SIGNS: ReadonlyMap<string, SignInfo> = new Map<string, SignInfo>([
  // Dollars and pesos
  ['$', shared('USD', DOLLARS)],
  ...each(['US$', 'U$S', 'USD$'], one('USD')),
  ...each(['dollars', 'dollari', 'dólares', 'dolar', 'dolarów', 'долларов'], shared('USD', DOLLARS)),
  ...each(['A$', 'AU$'], one('AUD')),
  ['C$', shared('CAD', ['CAD', 'NIO'])],
  ...each(['CA$', 'CAD$'], one('CAD')),
  ...each(['NZ$'], one('NZD')),
  ...each(['HK$'], one('HKD')),
  ...each(['S$', 'SG$'], one('SGD')),
  ...each(['MX$', 'Mex$'], one('MXN')),
  ...each(['NT$'], one('TWD')),
  ...each(['R$'], one('BRL')),
  ...each(['RD$'], one('DOP')),
  ...each(['J$'], one('JMD')),
  ...each(['TT$'], one('TTD')),
  ...each(['COL$', 'Col$'], one('COP')),
  ...each(['N$'], one('NAD')),
  ...each(['S/', 'S/.'], one('PEN')),
  // Euro, pound, yen, yuan
  ...each(['€', 'euro', 'euros', 'Euro', 'Euros', 'EURO', 'eur', 'евро'], one('EUR')),
  ['£', shared('GBP', ['GBP', 'EGP', 'GIP', 'FKP', 'SHP', 'LBP', 'SYP', 'SSP'])],
  ...each(['gbp'], one('GBP')),
  ['¥', shared('JPY', ['JPY', 'CNY'])],
  ...each(['円', 'yen', 'yenes'], one('JPY')),
  ...each(['元', 'RMB', 'CN¥', '人民币'], one('CNY')),
  // South and East Asia
  ...each(['₹', 'रु', 'inr'], one('INR')),
  // India, Pakistan, Nepal and Sri Lanka all write "Rs.": no default, the page must say which.
  ...each(['Rs', 'Rs.', 'RS', 'RS.'], shared(undefined, RUPEES)),
  ['₨', shared(undefined, RUPEES)],
  ...each(['₩', '원'], one('KRW')),
  ...each(['฿', 'บาท'], one('THB')),
  ...each(['₫', 'đ', 'vnđ', 'VNĐ', 'vnd'], one('VND')),
  ...each(['₱'], one('PHP')),
  ...each(['RM'], one('MYR')),
  ...each(['Rp', 'Rp.'], one('IDR')),
  ...each(['৳', 'Tk', 'Tk.'], one('BDT')),
  ...each(['៛'], one('KHR')),
  ...each(['₮'], one('MNT')),
  ...each(['₭'], one('LAK')),
  // Europe
  ...each(['₽', 'Р', 'р', 'р.', 'руб', 'руб.', 'рубль', 'рубля', 'рублей'], shared('RUB', RUBLES)),
  ...each(['Br'], shared(undefined, ['BYN', 'ETB'])),
  ...each(['₴', 'грн', 'грн.', 'гривня', 'гривні', 'гривень', 'uah'], one('UAH')),
  ...each(['zł', 'zl', 'złotych', 'pln', 'Zł'], one('PLN')),
  ...each(['Kč', 'Kc', 'czk'], one('CZK')),
  ...each(['Ft', 'huf'], one('HUF')),
  ...each(['lei', 'Lei', 'LEI', 'ron'], shared('RON', LEI)),
  ...each(['лв', 'лв.', 'лева'], one('BGN')),
  ...each(['kr', 'kr.', 'Kr', 'Kr.', ',-kr'], shared(undefined, KRONER)),
  ...each(['sek', 'kronor'], one('SEK')),
  ...each(['dkk'], one('DKK')),
  ...each(['nok'], one('NOK')),
  ...each(['Fr', 'Fr.', 'SFr.', 'fr.', 'chf'], one('CHF')),
  ...each(['₺', 'TL'], one('TRY')),
  ...each(['din', 'din.', 'Din', 'Din.', 'dinara', 'Dinara', 'дин', 'дин.', 'динара'], one('RSD')),
  ...each(['ден', 'ден.'], one('MKD')),
  // The kuna, Croatia's currency until 2023 ("270,00 Kn").
  ...each(['kn', 'Kn', 'KN', 'kn.'], one('HRK')),
  ...each(['KM'], one('BAM')),
  ...each(['Lek', 'lek', 'Lekë'], one('ALL')),
  ...each(['₾', 'ლ'], one('GEL')),
  ...each(['֏', 'դր.'], one('AMD')),
  ...each(['₼', 'ман.'], one('AZN')),
  ...each(['₸', 'тг', 'тг.', 'тенге'], one('KZT')),
  ...each(['сўм', 'сум', "so'm", 'soʻm'], one('UZS')),
  ...each(['сом'], one('KGS')),
  // Middle East and Africa
  ...each(['₪', 'ש"ח', 'ש״ח'], one('ILS')),
  ...each(['KD', 'K.D.', 'K.D', 'د.ك', 'د.ك.', 'kwd'], one('KWD')),
  ...each(['BD', 'B.D.', 'د.ب', 'د.ب.', 'bhd'], one('BHD')),
  ...each(['ر.ع', 'ر.ع.', 'R.O.', 'omr'], one('OMR')),
  ...each(['JD', 'J.D.', 'د.ا', 'د.أ'], one('JOD')),
  ...each(['DT', 'د.ت', 'د.ت.'], one('TND')),
  ...each(['LD', 'ل.د', 'ل.د.'], one('LYD')),
  ...each(['ع.د', 'د.ع'], one('IQD')),
  ...each(['د.إ', 'د.إ.', 'Dhs', 'Dhs.', 'aed'], one('AED')),
  ...each(['Dh', 'DH', 'Dh.', 'dh', 'درهم'], shared(undefined, ['AED', 'MAD'])),
  ...each(['د.م.', 'د.م'], one('MAD')),
  ...each(['ر.س', 'ر.س.', 'sar'], one('SAR')),
  ...each(['ر.ق', 'ر.ق.', 'QR'], one('QAR')),
  ['ريال', shared(undefined, ['SAR', 'QAR', 'OMR', 'YER', 'IRR'])],
  ...each(['ريال عماني', 'ريال عُماني'], one('OMR')),
  ...each(['ريال سعودي'], one('SAR')),
  ...each(['ريال قطري'], one('QAR')),
  ...each(['ریال'], one('IRR')),
  ...each(['تومان', 'تومن', 'Toman', 'toman'], { default: 'IRR', scale: 1 }),
  ...each(['ج.م', 'ج.م.', 'L.E.', 'جنيه'], shared('EGP', ['EGP', 'SDG'])),
  ...each(['ل.ل', 'ل.ل.'], one('LBP')),
  ...each(['د.ج'], one('DZD')),
  ...each(['₦'], one('NGN')),
  ...each(['KSh', 'Ksh', 'Ksh.', 'KShs', 'KShs.'], one('KES')),
  ...each(['USh'], one('UGX')),
  ...each(['TSh'], one('TZS')),
  ...each(['₵', 'GH₵', 'GH¢'], one('GHS')),
  ...each(['FCFA', 'CFA', 'F CFA'], shared(undefined, ['XOF', 'XAF'])),
  // Americas
  ...each(['₡'], one('CRC')),
  ...each(['₲'], one('PYG')),
  ...each(['Bs', 'Bs.'], shared(undefined, ['VES', 'BOB'])),
  ...each(['B/.'], one('PAB')),
]);
