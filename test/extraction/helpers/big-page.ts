/**
 * Builds the ~150 KB product page fixture (test/fixtures/pages/big-page.html) deterministically:
 * the shape of a real shop's product page, with a heavy head (inline CSS and scripts), a large
 * navigation menu, a long description, reviews, a grid of related products with their own
 * prices (the trap: none of them is the product's price) and a footer. The product itself is
 * described by JSON-LD (EUR 1.299,00, in stock) and its visible price block.
 *
 *   node --import tsx test/extraction/helpers/big-page.ts   (rewrites the fixture file)
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prng } from '../../helpers/prng.js';

const WORDS = (
  'kaffee mühle edelstahl präzision mahlwerk espresso bohnen aroma handlich robust langlebig design ' +
  'küche garantie qualität leise kraftvoll einstellbar stufen reinigung zubehör behälter deckel frisch ' +
  'ergonomisch modern klassisch geschenk täglich morgen genuss crema filter french press kegel'
).split(' ');

export function buildBigPage(targetBytes = 150_000): string {
  const rand = prng(20240501);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const sentence = (n: number): string => {
    const w = Array.from({ length: n }, () => pick(WORDS));
    const s = w.join(' ');
    return s.charAt(0).toUpperCase() + s.slice(1) + '.';
  };
  const euro = (cents: number): string => {
    const whole = Math.floor(cents / 100)
      .toString()
      .replace(/\B(?=(\d{3})+(?!\d))/g, '.');
    return `${whole},${String(cents % 100).padStart(2, '0')}&nbsp;€`;
  };

  const css = Array.from(
    { length: 260 },
    (_, i) =>
      `.c-${i}{margin:${i % 7}px ${i % 5}px;padding:${i % 3}px;color:#${((i * 2654435761) >>> 8).toString(16).slice(0, 6).padEnd(6, '0')};}`,
  ).join('\n');
  const analytics = Array.from(
    { length: 120 },
    (_, i) =>
      `window.dataLayer.push({event:"impression_${i}",item:{id:"SKU-${1000 + i}",list:"related",position:${i}}});`,
  ).join('\n');

  const menu = Array.from({ length: 14 }, (_, i) => {
    const items = Array.from(
      { length: 22 },
      (_, j) => `<li class="nav__item"><a class="nav__link" href="/c/${i}/${j}">${sentence(2).slice(0, -1)}</a></li>`,
    ).join('');
    return `<li class="nav__group"><button class="nav__toggle" aria-expanded="false">${sentence(1).slice(0, -1)}</button><ul class="nav__list">${items}</ul></li>`;
  }).join('\n');

  const description = Array.from({ length: 18 }, () => `<p>${sentence(40)}</p>`).join('\n');

  const reviews = Array.from(
    { length: 24 },
    (_, i) =>
      `<article class="review" id="review-${i}"><header><span class="review__author">Kunde ${i + 1}</span> <span class="review__stars" aria-label="${1 + (i % 5)} von 5 Sternen">${'★'.repeat(1 + (i % 5))}</span></header><p>${sentence(30)}</p><footer><time datetime="2024-0${1 + (i % 9)}-1${i % 10}">1${i % 10}.0${1 + (i % 9)}.2024</time> · ${Math.floor(rand() * 40)} fanden das hilfreich</footer></article>`,
  ).join('\n');

  const related = Array.from({ length: 24 }, (_, i) => {
    const cents = 1999 + Math.floor(rand() * 200_000);
    return `<li class="card"><a href="/p/related-${i}"><img src="/img/r${i}.jpg" alt="${sentence(3).slice(0, -1)}" width="200" height="200" loading="lazy"><h3 class="card__title">${sentence(4).slice(0, -1)}</h3></a><div class="card__price"><span class="price">${euro(cents)}</span></div><button class="card__add" type="button">In den Warenkorb</button></li>`;
  }).join('\n');

  const footer = Array.from(
    { length: 8 },
    (_, i) =>
      `<div class="footer__col"><h4>${sentence(2).slice(0, -1)}</h4><ul>${Array.from({ length: 12 }, (_, j) => `<li><a href="/info/${i}/${j}">${sentence(3).slice(0, -1)}</a></li>`).join('')}</ul></div>`,
  ).join('\n');

  const jsonLd = JSON.stringify({
    '@context': 'https://schema.org',
    '@type': 'Product',
    name: 'Kaffeemühle Präzision Pro',
    sku: 'KM-PRO-1299',
    brand: { '@type': 'Brand', name: 'Mahlwerk' },
    image: ['https://shop.example/img/km-pro-1.jpg'],
    aggregateRating: { '@type': 'AggregateRating', ratingValue: '4.6', reviewCount: '24' },
    offers: {
      '@type': 'Offer',
      url: 'https://shop.example/p/kaffeemuehle-praezision-pro',
      price: '1299.00',
      priceCurrency: 'EUR',
      availability: 'https://schema.org/InStock',
      itemCondition: 'https://schema.org/NewCondition',
    },
  });

  const head = `<!DOCTYPE html>
<html lang="de">
<head>
<meta charset="utf-8">
<title>Kaffeemühle Präzision Pro – Mahlwerk | Shop</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="${sentence(20)}">
<link rel="canonical" href="https://shop.example/p/kaffeemuehle-praezision-pro">
<meta property="og:type" content="product">
<meta property="og:title" content="Kaffeemühle Präzision Pro">
<meta property="og:image" content="https://shop.example/img/km-pro-1.jpg">
<style>
${css}
</style>
<script>window.dataLayer = window.dataLayer || [];
${analytics}
</script>
<script type="application/ld+json">${jsonLd}</script>
</head>`;

  const body = (filler: string): string => `
<body class="page page--product">
<header class="site-header"><a class="logo" href="/">Shop</a><nav class="nav"><ul class="nav__root">
${menu}
</ul></nav><form class="search" action="/search"><input type="search" name="q" placeholder="Suche"></form></header>
<main id="main">
<nav class="breadcrumb"><a href="/">Start</a> › <a href="/c/kueche">Küche</a> › <span>Kaffeemühle Präzision Pro</span></nav>
<section class="product">
<div class="product__gallery">${Array.from({ length: 6 }, (_, i) => `<img src="/img/km-pro-${i + 1}.jpg" alt="Ansicht ${i + 1}" width="600" height="600">`).join('')}</div>
<div class="product__info">
<h1 class="product__title">Kaffeemühle Präzision Pro</h1>
<div class="product__price"><span class="price price--current">1.299,00&nbsp;€</span> <span class="price__note">inkl. MwSt., zzgl. Versand</span></div>
<form class="product__form" action="/cart/add" method="post"><input type="hidden" name="sku" value="KM-PRO-1299"><button type="submit" class="product__add" name="add">In den Warenkorb</button></form>
<div class="product__description">
${description}
</div>
</div>
</section>
<section class="reviews"><h2>Bewertungen</h2>
${reviews}
</section>
<section class="related"><h2>Das könnte Ihnen auch gefallen</h2><ul class="cards">
${related}
</ul></section>
${filler}
</main>
<footer class="site-footer">
${footer}
<p class="legal">© 2024 Shop GmbH · Alle Preise inkl. MwSt.</p>
</footer>
</body>
</html>
`;

  // Pad with further description paragraphs until the page reaches the target size.
  let filler = '';
  let page = head + body(filler);
  while (Buffer.byteLength(page) < targetBytes) {
    filler += `<p class="seo-text">${sentence(30)}</p>\n`;
    page = head + body(`<section class="seo">${filler}</section>`);
  }
  return page;
}

const here = path.dirname(fileURLToPath(import.meta.url));
export const BIG_PAGE_PATH = path.resolve(here, '../../fixtures/pages/big-page.html');

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(BIG_PAGE_PATH, buildBigPage());
  console.log(`wrote ${BIG_PAGE_PATH} (${fs.statSync(BIG_PAGE_PATH).size} bytes)`);
}
