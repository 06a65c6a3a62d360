import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePrice, type PriceHints } from '../../src/extraction/index.js';

function ok(text: string, hints?: PriceHints) {
  const r = parsePrice(text, hints);
  assert.ok(r.ok, `expected ${JSON.stringify(text)} to parse, got ${r.ok ? '' : r.reason}`);
  return r;
}

function fails(text: string, hints?: PriceHints): string {
  const r = parsePrice(text, hints);
  assert.equal(r.ok, false, `expected ${JSON.stringify(text)} to be refused, got ${JSON.stringify(r)}`);
  return r.ok ? '' : r.reason;
}

describe('parsePrice: formats shops write', () => {
  const table: Array<[string, string, string | undefined]> = [
    ['1.299,00 €', '1299.00', 'EUR'],
    ['$1,299.00', '1299.00', 'USD'],
    ["CHF 1'299.–", '1299', 'CHF'],
    ['CHF 1’299.50', '1299.50', 'CHF'],
    ['1 299,00 zł', '1299.00', 'PLN'],
    ['1\u00a0299,00\u00a0zł', '1299.00', 'PLN'],
    ['1\u202f299,00\u00a0zł', '1299.00', 'PLN'],
    ['R$ 260,00', '260.00', 'BRL'],
    ['¥1,299', '1299', 'JPY'],
    ['￥１，２９９', '1299', 'JPY'],
    ['1,299円', '1299', 'JPY'],
    ['£12', '12', 'GBP'],
    ['12,-', '12', undefined],
    ['12,– €', '12', 'EUR'],
    ['€ 9,99*', '9.99', 'EUR'],
    ['EUR 1.299', '1299', 'EUR'],
    ['1.299 EUR', '1299', 'EUR'],
    ['US$ 12.50', '12.50', 'USD'],
    ['A$149.95', '149.95', 'AUD'],
    ['C$ 12', '12', 'CAD'],
    ['$1,299.00 USD', '1299.00', 'USD'],
    ['₹1,29,999.00', '129999.00', 'INR'],
    ['Rs. 1,299', '1299', undefined],
    ['1 299 Kč', '1299', 'CZK'],
    ['12 990 Ft', '12990', 'HUF'],
    ['129,99 lei', '129.99', 'RON'],
    ['₩12,900', '12900', 'KRW'],
    ['€.99', '0.99', 'EUR'],
    ['Preis: 19,95 € inkl. MwSt.', '19.95', 'EUR'],
    ['1299.00', '1299.00', undefined],
  ];
  for (const [text, amount, currency] of table) {
    it(`reads ${JSON.stringify(text)} as ${amount} ${currency ?? '(no currency)'}`, () => {
      const r = ok(text);
      assert.equal(r.amount, amount);
      assert.equal(r.currency, currency);
    });
  }

  it('keeps the decimals as written and never goes through floating point', () => {
    assert.equal(ok('$19.90').amount, '19.90');
    assert.equal(ok('0,10 €').amount, '0.10');
    assert.equal(ok('$99,999,999,999.9999').amount, '99999999999.9999');
  });
});

describe('parsePrice: "1,299" and "1.299" (one separator followed by three digits)', () => {
  it('refuses a lone three-digit group when nothing settles it, and says what would', () => {
    assert.match(fails('1,299'), /could be 1299 or 1\.299: .*set the listing's locale or currency/);
    assert.match(fails('1.299'), /could be 1299 or 1\.299/);
    assert.match(fails('129.900'), /could be 129900 or 129\.900/);
  });

  it('reads it as thousands for a currency with two decimals or none', () => {
    assert.equal(ok('1.299 EUR').amount, '1299');
    assert.equal(ok('$699,000').amount, '699000');
    assert.equal(ok('1.299', { currency: 'EUR' }).amount, '1299');
    assert.equal(ok('1 299 kr').amount, '1299');
    assert.equal(ok('¥1,299').amount, '1299');
  });

  it('reads one or two digits after a lone separator as decimals', () => {
    assert.equal(ok('1,29').amount, '1.29');
    assert.equal(ok('12.5').amount, '12.5');
    assert.equal(ok('1.2345').amount, '1.2345');
  });

  it('reads it as decimals when the integer part is 0 or longer than three digits', () => {
    assert.equal(ok('0,299').amount, '0.299');
    assert.equal(ok('1299.000').amount, '1299.000');
  });

  it('follows a locale or decimal hint', () => {
    assert.equal(ok('1,299', { locale: 'de-DE' }).amount, '1.299');
    assert.equal(ok('1.299', { locale: 'de-DE' }).amount, '1299');
    assert.equal(ok('1.299', { locale: 'en-US' }).amount, '1.299');
    assert.equal(ok('1.299', { decimal: '.' }).amount, '1.299');
    assert.equal(ok('1,299', { decimal: '.' }).amount, '1299');
  });

  it('follows the currency: no minor unit means thousands, three decimals means decimal', () => {
    assert.equal(ok('12.990', { currency: 'CLP', decimal: '.' }).amount, '12990');
    assert.equal(ok('1.299 KWD').amount, '1.299');
    assert.equal(ok('1.299', { currency: 'KWD' }).amount, '1.299');
  });

  it('lets the text decide when both separators appear, whatever the hint', () => {
    assert.equal(ok('1.299,00', { decimal: '.' }).amount, '1299.00');
    assert.equal(ok('1,299.00', { locale: 'de-DE' }).amount, '1299.00');
  });

  it('refuses malformed groupings instead of guessing', () => {
    assert.match(fails('1,2,3'), /not a well-formed number/);
    assert.match(fails('12.34.5'), /not a well-formed number/);
  });
});

describe('parsePrice: currency symbols and hints', () => {
  it('reads $ as USD unless the page currency is another dollar', () => {
    assert.equal(ok('$12').currency, 'USD');
    assert.equal(ok('$12', { currency: 'CAD' }).currency, 'CAD');
    assert.equal(ok('$12', { currency: 'AUD' }).currency, 'AUD');
    assert.equal(ok('$12', { currency: 'EUR' }).currency, 'USD');
  });

  it('reads ¥ as JPY unless the page says CNY', () => {
    assert.equal(ok('¥1,299').currency, 'JPY');
    assert.equal(ok('¥1,299', { currency: 'CNY' }).currency, 'CNY');
  });

  it('leaves kr unresolved without a hint and says why', () => {
    const r = ok('1 299 kr');
    assert.equal(r.amount, '1299');
    assert.equal(r.currency, undefined);
    assert.equal(r.currencyText, 'kr');
    assert.match(r.notes.join(' '), /SEK, NOK, DKK, ISK/);
    assert.equal(ok('1 299 kr', { currency: 'NOK' }).currency, 'NOK');
    assert.equal(ok('kr. 1.299,00', { currency: 'DKK' }).currency, 'DKK');
  });

  it('does not read upper-case words as currency codes', () => {
    const r = ok('NOW 15');
    assert.equal(r.amount, '15');
    assert.equal(r.currency, undefined);
  });

  it('takes a single currency named elsewhere in the text', () => {
    const r = ok('Price in EUR: 12,99');
    assert.equal(r.amount, '12.99');
    assert.equal(r.currency, 'EUR');
  });
});

describe('parsePrice: several numbers in one text', () => {
  it('takes the low bound of a range and says it is a range', () => {
    const r = ok('$10 - $20');
    assert.equal(r.amount, '10');
    assert.deepEqual(r.range, { low: '10', high: '20' });
    assert.deepEqual(ok('10,00 € – 20,00 €').range, { low: '10.00', high: '20.00' });
    assert.deepEqual(ok('od 10 do 20 zł').range, { low: '10', high: '20' });
  });

  it('takes the current price of a was/now pair in either order', () => {
    const a = ok('Was $20 Now $15');
    assert.equal(a.amount, '15');
    assert.match(a.notes.join(' '), /\$20/);
    assert.equal(ok('Now $15 (was $20)').amount, '15');
    assert.equal(ok('9,99 € statt 12,99 €').amount, '9.99');
    assert.equal(ok('De R$ 300,00 por R$ 260,00').amount, '260.00');
    assert.equal(ok('Original price was: £20.00. Current price is: £15.00.').amount, '15.00');
    assert.equal(ok('通常価格 4,400円 販売価格 3,980円').amount, '3980');
    assert.equal(ok("statt CHF 1'499.– CHF 1'299.–").amount, '1299');
  });

  it('marks a starting price', () => {
    const r = ok('From $9.99');
    assert.equal(r.amount, '9.99');
    assert.equal(r.from, true);
    assert.equal(ok('ab 9,99 €').from, true);
    assert.equal(ok('à partir de 9,99 €').from, true);
    assert.equal(ok('$9.99').from, undefined);
  });

  it('ignores unit prices, savings, percentages, instalments and quantities', () => {
    assert.equal(ok('9,99 € (1 kg = 4,99 €)').amount, '9.99');
    assert.equal(ok('$12.99 ($0.50/oz)').amount, '12.99');
    assert.equal(ok('$79.00 Save $20.00').amount, '79.00');
    assert.equal(ok('$79.00 (20% off)').amount, '79.00');
    assert.equal(ok('R$ 260,00 ou 10x de R$ 26,00 sem juros').amount, '260.00');
    assert.equal(ok('iPhone 15 128GB $999').amount, '999');
  });

  it('refuses texts that hold no price of their own', () => {
    assert.match(fails('4,99 €/kg'), /unit price/);
    assert.match(fails('Save $5'), /saving/);
    assert.match(fails('2 for $10'), /multi-buy/);
    assert.match(fails('128GB'), /quantity or model number/);
  });

  it('reads an old price on its own but marks it old: no source records it', () => {
    const uvp = ok('UVP 12,99 €');
    assert.deepEqual([uvp.amount, uvp.currency, uvp.old], ['12.99', 'EUR', true]);
    assert.match(uvp.notes[0] ?? '', /holds only an old price/);
    assert.equal(ok('běžná cena 590 Kč').old, true);
    assert.equal(ok('$15.00').old, undefined);
    assert.match(fails('Was $20 Was $30'), /only an old price/);
  });

  it('refuses to guess between two prices nothing tells apart', () => {
    assert.match(fails('$20.00 $15.00'), /several prices/);
  });

  it('accepts repeated identical prices', () => {
    assert.equal(ok('$15.00 $15.00').amount, '15.00');
  });
});

describe('parsePrice: values that are not prices', () => {
  it('refuses text without a number', () => {
    assert.match(fails('Call for price'), /holds no number/);
    assert.match(fails('Ausverkauft'), /holds no number/);
    assert.match(fails(''), /empty/);
    assert.match(fails('   \u00a0 '), /empty/);
  });

  it('refuses negative amounts', () => {
    assert.match(fails('-$5'), /negative/);
    assert.match(fails('−5,00 €'), /negative/);
    assert.match(fails('€ -5'), /negative/);
  });

  it('refuses absurd amounts and sub-precision digits', () => {
    assert.match(fails('$999,999,999,999.00'), /too large/);
    assert.match(fails('$1.23456'), /decimal places/);
    assert.equal(ok('$1.230000').amount, '1.2300');
  });

  it('refuses a whole paragraph', () => {
    assert.match(fails('Lorem ipsum $5 '.repeat(40)), /too long/);
  });

  it('returns zero as zero (callers decide what a zero price means)', () => {
    assert.equal(ok('0,00 €').amount, '0.00');
  });
});

// Strings from public pages (sources in test/fixtures/price-strings/README.md and corpus.json).
describe('parsePrice: real-world classes once read as a different number', () => {
  it('joins a space after the decimal separator when a currency sign is attached', () => {
    assert.equal(ok('1.837, 32 €').amount, '1837.32');
    assert.equal(ok('118, 99 TL').currency, 'TRY');
    assert.equal(ok('118, 99 TL').amount, '118.99');
    assert.equal(ok('$ 8. 94').amount, '8.94');
    assert.match(fails('38, 40'), /space after its decimal separator or two numbers/);
  });

  it('joins cents printed apart after the currency', () => {
    assert.equal(ok('35€ 99').amount, '35.99');
    assert.equal(ok('35€99').amount, '35.99');
    assert.equal(ok('35€ 99 *').amount, '35.99');
  });

  it('reads three-decimal dinars and rials as decimals', () => {
    assert.deepEqual([ok('18.900 K.D.').amount, ok('18.900 K.D.').currency], ['18.900', 'KWD']);
    assert.deepEqual([ok('BD 0.880').amount, ok('BD 0.880').currency], ['0.880', 'BHD']);
    assert.equal(ok('OMR0.100').amount, '0.100');
    assert.deepEqual([ok('12,500 DT').amount, ok('12,500 DT').currency], ['12.500', 'TND']);
  });

  it('refuses a zero now price beside a was price', () => {
    assert.match(fails('Was £20.00 Now £0.00'), /zero current price/);
  });

  it('reads a leading separator only on its own', () => {
    assert.equal(ok('$.75').amount, '0.75');
    assert.match(fails('$..75'), /not a well-formed number/);
    assert.match(fails('$.75,333'), /not a well-formed number/);
  });

  it('refuses figures scaled by a word', () => {
    assert.match(fails('Rp269 ribu'), /scaled by a word/);
    assert.match(fails('1–3 млн ₽'), /scaled by a word/);
  });

  it('settles a shared sign by the code the text writes', () => {
    assert.equal(ok('NZD $100.70').currency, 'NZD');
    assert.equal(ok('$14,39 USD').currency, 'USD');
  });
});

describe('parsePrice: real-world classes once refused', () => {
  it('reads currency words in their grammatical forms and abbreviations', () => {
    const table: Array<[string, string, string]> = [
      ['1 500 рублей', '1500', 'RUB'],
      ['899 ₽', '899', 'RUB'],
      ['Від 50 грн', '50', 'UAH'],
      ['4.890.000 Kč', '4890000', 'CZK'],
      ['279,99 zł', '279.99', 'PLN'],
      ['34 900 Ft', '34900', 'HUF'],
      ['4.520,00 TL', '4520.00', 'TRY'],
      ['Rp65.490', '65490', 'IDR'],
      ['115 ريال عُماني', '115', 'OMR'],
      ['22,99 dollari al mese', '22.99', 'USD'],
      ['1.780 yenes', '1780', 'JPY'],
    ];
    for (const [text, amount, currency] of table) {
      const r = ok(text);
      assert.deepEqual([r.amount, r.currency], [amount, currency], text);
    }
  });

  it('reads the toman as ten rials', () => {
    const r = ok('157,000 تومان');
    assert.deepEqual([r.amount, r.currency], ['1570000', 'IRR']);
    assert.match(r.notes.join(' '), /counts 10 IRR/);
  });

  it('keeps per-piece prices, marks per-period ones and drops per-measure ones', () => {
    assert.equal(ok('$4.99/each').period, undefined);
    assert.equal(ok('$4.99/ea').amount, '4.99');
    assert.equal(ok('$4.99 each').amount, '4.99');
    assert.equal(ok('$9.99/mo').period, 'month');
    assert.equal(ok('£9.99 per month').period, 'month');
    assert.equal(ok('US$7,26 per bulan').period, 'month');
    assert.equal(ok('$99/yr').period, 'year');
    assert.match(fails('1,99 €/100 g'), /unit price/);
    assert.match(fails('2,99 €/l'), /unit price/);
    assert.match(fails('450 Ft/fő/éjszaka'), /unit price/);
  });

  it('reads a repeated price and a range with the currency on both ends', () => {
    assert.equal(ok('18.900 K.D. 18.900 K.D.').amount, '18.900');
    assert.equal(ok('1 299 Kč 1 299 Kč').amount, '1299');
    assert.deepEqual(ok('$10.00 USD - $20.00 USD').range, { low: '10.00', high: '20.00' });
    assert.deepEqual(ok('4 000 – 6 000 Kč').range, { low: '4000', high: '6000' });
    assert.deepEqual(ok('od 10 zł do 20 zł').range, { low: '10', high: '20' });
  });
});

describe('parsePrice: classes found by the 500-string corpus', () => {
  it('drops savings written in Vietnamese, Turkish and Hebrew', () => {
    for (const text of ['Giảm 100.000₫', 'Son 30 günün en ucuzu Kazancın 115,71 TL', 'חיסכון של 248 ₪']) {
      const r = parsePrice(text);
      assert.equal(r.ok, false, text);
      if (!r.ok) assert.match(r.reason, /a saving/, text);
    }
  });

  it('reads a Cyrillic "за" right after the sign as a unit price', () => {
    const r = parsePrice('Миди – 7.50 лв.за килограм');
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.reason, /unit price/);
    assert.equal(ok('шоколадов заек (chocolate bunny) – 7 лв.').amount, '7');
    // "за" is also "for": a set or a piece is the price.
    assert.equal(ok('1500 руб. за комплект').amount, '1500');
    assert.equal(ok('100 грн за штуку').amount, '100');
    assert.equal(parsePrice('0.79 лв. за км').ok, false);
  });

  it('leaves "¥" open beside Chinese text, unless the page or kana settle it', () => {
    const open = ok('制作费用：¥100');
    assert.deepEqual([open.amount, open.currency], ['100', undefined]);
    assert.ok(
      open.notes.some((n) => n.includes('JPY, CNY')),
      open.notes.join('; '),
    );
    assert.equal(ok('制作费用：¥100', { currency: 'CNY' }).currency, 'CNY');
    assert.equal(ok('¥1,980（税込）です').currency, 'JPY');
    assert.equal(ok('¥1,980').currency, 'JPY');
  });

  it("applies the unit after a range's high end to its low end too", () => {
    const r = parsePrice('HK$ 20,000 - 35,000 / 呎');
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.reason, /unit price/);
    assert.deepEqual(ok('฿900–1,800/day').range, { low: '900', high: '1800' });
  });

  it('refuses figures scaled by Persian, Arabic and Korean words and reads Persian digits', () => {
    for (const text of ['3.5 میلیون تومان', '2 مليون ريال', '5천원']) assert.equal(parsePrice(text).ok, false, text);
    const r = ok('۵۵,۰۰۰,۰۰۰ تومان');
    assert.deepEqual([r.amount, r.currency], ['550000000', 'IRR']);
  });

  it('gives "Rs." no currency of its own: India, Pakistan, Nepal and Sri Lanka all write it', () => {
    const r = ok('Rs. 450');
    assert.deepEqual([r.amount, r.currency], ['450', undefined]);
    assert.ok(
      r.notes.some((n) => n.includes('INR, PKR, LKR, NPR')),
      r.notes.join('; '),
    );
    assert.equal(ok('Rs. 450', { currency: 'NPR' }).currency, 'NPR');
    assert.equal(ok('Rs. 1,159', { currency: 'INR' }).currency, 'INR');
    assert.equal(ok('₹1,299').currency, 'INR');
  });

  it('reads periods written in Portuguese, Thai, Chinese and Korean', () => {
    for (const [text, amount, period] of [
      ['R$ 1.840 / mês', '1840', 'month'],
      ['฿1,000/วัน', '1000', 'day'],
      ['8000元/月', '8000', 'month'],
      ['₩9,900/월', '9900', 'month'],
    ] as const) {
      const r = ok(text);
      assert.deepEqual([r.amount, r.period], [amount, period], text);
    }
  });

  it('reads a spaced dash after a label as a separator, not a minus', () => {
    assert.equal(ok('Mevzun Pro - ₺1.500 / ay').amount, '1500');
    assert.equal(ok('ბაი-ინი - 550₾').amount, '550');
    assert.equal(parsePrice('-5,00 €').ok, false);
    assert.equal(parsePrice('- 5,00 €').ok, false);
    assert.equal(parsePrice('Rabatt: -5,00 €').ok, false);
  });
});

describe('parsePrice: what the shopper pays (issue 23)', () => {
  it('takes the consumer price with VAT over the price without it', () => {
    assert.equal(ok('EUR29.66 (inc VAT 20% - UK & EEC) EUR24.71 (exc VAT 20% - UK & EEC)').amount, '29.66');
    assert.equal(ok('29,66 € inkl. MwSt. 24,71 € zzgl. MwSt.').amount, '29.66');
    assert.equal(ok('24,71 € HT 29,66 € TTC').amount, '29.66');
    assert.equal(ok('Netto: 24,71 € Brutto: 29,66 €').amount, '29.66');
    assert.equal(ok('36,53 € brez DDV 40,00 €').amount, '40.00');
    assert.equal(ok('199 zł cena netto: 161,79 zł').amount, '199');
    // "zzgl. Versand" is shipping, not tax: the price stays.
    assert.equal(ok('29,95 € inkl. MwSt. zzgl. Versand').exTax, undefined);
    // A label with a colon names the price after it, not the one before.
    assert.equal(ok('40.00€ Brez DDV: 36.53€').amount, '40.00');
  });

  it("reads an auction's estimate range and starting price as old, its current bid as current", () => {
    assert.match(fails('Schätzpreis 1.200 € – 1.800 €'), /only an old price/);
    assert.match(fails('Estimate $300 - $500'), /only an old price/);
    assert.equal(ok('Starting bid $150 Current bid $200').amount, '200');
    assert.equal(ok('Was $20 - $30 Now $15').amount, '15');
  });

  it('reads a price that is only without VAT, and says so', () => {
    const r = ok('Brez DDV: 36.53€');
    assert.deepEqual([r.amount, r.exTax], ['36.53', true]);
    assert.match(r.notes.join(' '), /without VAT/);
    assert.equal(ok('24,71 € exkl. MwSt.').exTax, true);
  });

  it('reads "Free" alone as zero (a placeholder to extraction), and nothing else as free', () => {
    assert.equal(ok('Free!').amount, '0');
    assert.equal(ok('Gratis').amount, '0');
    assert.match(fails('Free shipping'), /no number/);
  });

  it('drops savings and per-set prices written in Chinese and Japanese', () => {
    assert.match(fails('買一組 每組990元 現省$400'), /no price/);
    assert.equal(ok('特價 NT$990 立省 NT$400').amount, '990');
    assert.equal(ok('现价 ¥199 节省 ¥50', { currency: 'CNY' }).amount, '199');
  });

  it('reads the kuna and the ruble as Russian shops still code it (RUR)', () => {
    assert.equal(ok('270,00 Kn').currency, 'HRK');
    assert.equal(ok('249 RUR').currency, undefined, 'RUR is no code written in text; structured data maps it');
  });
});
