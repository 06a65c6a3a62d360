import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attachment, csvCell, csvRow, csvStream, csvText } from '../../src/http/csv.js';

describe('csv helpers', () => {
  it('quotes cells holding commas, quotes, CR or LF, and doubles inner quotes (RFC 4180)', () => {
    assert.equal(csvCell('plain'), 'plain');
    assert.equal(csvCell('a,b'), '"a,b"');
    assert.equal(csvCell('say "hi"'), '"say ""hi"""');
    assert.equal(csvCell('two\nlines'), '"two\nlines"');
    assert.equal(csvCell('cr\rhere'), '"cr\rhere"');
    assert.equal(csvCell(''), '');
    assert.equal(csvCell(null), '');
    assert.equal(csvCell(undefined), '');
  });

  it('guards text starting with = + - @ tab or CR against formula injection, but not numbers', () => {
    assert.equal(csvCell('=HYPERLINK("http://x","y")'), '"\'=HYPERLINK(""http://x"",""y"")"');
    assert.equal(csvCell('+1'), "'+1");
    assert.equal(csvCell('-2+3'), "'-2+3");
    assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
    assert.equal(csvCell('\tx'), "'\tx");
    assert.equal(csvCell('\rx'), '"\'\rx"');
    assert.equal(csvCell('a=b'), 'a=b');
    assert.equal(csvCell(-1.5), '-1.5');
    assert.equal(csvCell(19.99), '19.99');
    assert.equal(csvCell(0.1), '0.1');
    assert.equal(csvCell(Number.NaN), '');
    assert.equal(csvCell(true), 'true');
    assert.equal(csvCell(false), 'false');
  });

  it('keeps unicode, HTML and SQL text as it is', () => {
    assert.equal(csvCell('Ünïcødé 🛒'), 'Ünïcødé 🛒');
    assert.equal(csvCell("<b>x</b>'; drop table products; --"), "<b>x</b>'; drop table products; --");
  });

  it('ends every row with CRLF', () => {
    assert.equal(csvRow(['a', 1, null, 'b,c']), 'a,1,,"b,c"\r\n');
    assert.equal(csvText(['h1', 'h2'], [['x', 2]]), 'h1,h2\r\nx,2\r\n');
  });

  it('streams a header and pages of rows', async () => {
    async function* pages() {
      yield [['a', 1]];
      yield [];
      yield [
        ['b', 2],
        ['=c', 3],
      ];
    }
    let text = '';
    for await (const chunk of csvStream(['name', 'n'], pages())) text += String(chunk);
    assert.equal(text, "name,n\r\na,1\r\nb,2\r\n'=c,3\r\n");
  });

  it('makes a Content-Disposition attachment header, with filename* for non-ASCII names', () => {
    assert.equal(attachment('prod_1-prices.csv'), 'attachment; filename="prod_1-prices.csv"');
    assert.equal(
      attachment('préis "x".csv'),
      'attachment; filename="pr_is _x_.csv"; filename*=UTF-8\'\'pr%C3%A9is%20%22x%22.csv',
    );
  });
});
