import crypto from 'node:crypto';
import { DAY_MS } from '../../time.js';

/**
 * The demo's made-up shop world: a catalogue of kitchen and electronics products, the
 * competitors that sell them, and one price model that both the demo shop's pages (now) and
 * the back-filled history (the past) read, so the history runs into what the checks then see.
 * Everything is derived from names by hashing: the same every run, no randomness to seed.
 */

export interface DemoProduct {
  sku: string;
  name: string;
  brand: string;
  category: 'kitchen' | 'electronics';
  base_price: number;
  description: string;
}

export interface DemoCompetitor {
  /** Path prefix of its pages on the demo shop. */
  slug: string;
  name: string;
  /** Its usual price level against our base price. */
  level: number;
  /** How often it runs a sale: one sale week every `saleEvery` days. */
  saleEvery: number;
}

const KITCHEN: [string, string, number][] = [
  ['Electric kettle 1.7 l', 'Kochwerk', 39.99],
  ['2-slice toaster', 'Kochwerk', 34.99],
  ['Stand mixer 5 l', 'Brava', 349],
  ['Hand blender 800 W', 'Brava', 49.99],
  ['Espresso machine', 'Caffara', 279],
  ['Burr coffee grinder', 'Caffara', 119],
  ['Milk frother', 'Caffara', 59.99],
  ['Air fryer 5.5 l', 'Nordhaus', 129],
  ['Rice cooker 1.8 l', 'Nordhaus', 69.99],
  ['Slow cooker 6 l', 'Nordhaus', 79.99],
  ['Cast iron skillet 28 cm', 'Ferro', 54.9],
  ["Chef's knife 20 cm", 'Ferro', 89],
  ['Knife block, 6 pieces', 'Ferro', 149],
  ['Non-stick pan set', 'Ferro', 99.99],
  ['Food processor 1000 W', 'Brava', 189],
  ['Juicer, slow press', 'Brava', 229],
  ['Kitchen scale', 'Kochwerk', 19.99],
  ['Waffle maker', 'Kochwerk', 44.99],
  ['Vacuum sealer', 'Nordhaus', 89.99],
  ['Sous-vide stick', 'Nordhaus', 139],
  ['Glass teapot 1.2 l', 'Kochwerk', 29.99],
  ['Dutch oven 5 l', 'Ferro', 169],
  ['Pasta machine', 'Caffara', 64.99],
  ['Bread maker', 'Nordhaus', 119.99],
  ['Induction hob, single', 'Kochwerk', 74.99],
];

const ELECTRONICS: [string, string, number][] = [
  ['Wireless earbuds', 'Sonique', 129],
  ['Noise-cancelling headphones', 'Sonique', 299],
  ['Bluetooth speaker', 'Sonique', 89.99],
  ['Soundbar 2.1', 'Sonique', 249],
  ['USB-C charger 65 W', 'Voltra', 39.99],
  ['Power bank 20000 mAh', 'Voltra', 49.99],
  ['Portable SSD 1 TB', 'Voltra', 109],
  ['Smartwatch', 'Lumen', 229],
  ['Fitness tracker', 'Lumen', 79.99],
  ['E-reader 6"', 'Lumen', 139.99],
  ['Action camera 4K', 'Lumen', 299],
  ['Webcam 1080p', 'Pixelon', 69.99],
  ['Mechanical keyboard', 'Pixelon', 119],
  ['Wireless mouse', 'Pixelon', 39.99],
  ['27" monitor, QHD', 'Pixelon', 329],
  ['Wi-Fi 6 router', 'Netra', 149],
  ['Mesh Wi-Fi, 3 pack', 'Netra', 279],
  ['Smart plug, 2 pack', 'Netra', 24.99],
  ['Robot vacuum', 'Nordhaus', 399],
  ['Electric toothbrush', 'Lumen', 89.99],
  ['Tablet 10"', 'Pixelon', 349],
  ['Streaming stick 4K', 'Netra', 59.99],
  ['Dash cam', 'Lumen', 99.99],
  ['Drone, foldable', 'Pixelon', 499],
  ['Instant camera', 'Lumen', 89],
];

export const DEMO_COMPETITORS: DemoCompetitor[] = [
  { slug: 'megamarkt', name: 'Megamarkt', level: 0.97, saleEvery: 28 },
  { slug: 'elektrodiscount', name: 'ElektroDiscount', level: 0.93, saleEvery: 45 },
  { slug: 'kuechenkontor', name: 'KüchenKontor', level: 1.04, saleEvery: 35 },
  { slug: 'preisfuchs', name: 'Preisfuchs', level: 0.99, saleEvery: 21 },
];

/** A number in [0, 1) from text: the same for the same text, every run. */
export function unit(...parts: (string | number)[]): number {
  return crypto.createHash('sha256').update(parts.join('|')).digest().readUInt32BE(0) / 2 ** 32;
}

/** The first `count` products, alternating kitchen and electronics. */
export function demoProducts(count: number): DemoProduct[] {
  const all: DemoProduct[] = [];
  for (let i = 0; i < Math.max(KITCHEN.length, ELECTRONICS.length); i++) {
    for (const [list, category, prefix] of [
      [KITCHEN, 'kitchen', 'KIT'],
      [ELECTRONICS, 'electronics', 'ELC'],
    ] as const) {
      const entry = list[i];
      if (!entry) continue;
      const [name, brand, base_price] = entry;
      all.push({
        sku: `${prefix}-${String(i + 1).padStart(3, '0')}`,
        name: `${brand} ${name}`,
        brand,
        category,
        base_price,
        description: `${name} by ${brand}. Demo product of pricehound.`,
      });
    }
  }
  return all.slice(0, count);
}

/** Which competitors sell a product: three or four of them. */
export function sellers(product: DemoProduct): DemoCompetitor[] {
  const skip = Math.floor(unit(product.sku, 'skip') * 6); // 0-3: that one does not sell it; 4-5: all do
  return DEMO_COMPETITORS.filter((_, i) => i !== skip);
}

const round99 = (p: number) => Math.max(0.99, Math.round(p) - 0.01);

/**
 * A competitor's price (or ours, `competitor` null) of a product on the UTC day of `at`: its
 * level, a slow drift of a few percent, a sale week now and then (15-25 % off), and a few
 * days out of stock in some months.
 */
export function priceAt(
  product: DemoProduct,
  competitor: DemoCompetitor | null,
  at: Date,
): { price: number; inStock: boolean } {
  const day = Math.floor(at.getTime() / DAY_MS);
  const who = competitor?.slug ?? 'own';
  const phase = unit(product.sku, who, 'phase');
  const level = competitor ? competitor.level * (0.97 + unit(product.sku, who, 'level') * 0.06) : 1;
  const period = 20 + unit(product.sku, who, 'period') * 25;
  // The drift moves in steps of a few days, as shops reprice, not every day.
  const step = Math.floor(day / 3) * 3;
  const drift = 1 + 0.04 * Math.sin((2 * Math.PI * step) / period + phase * 6.28);
  const saleEvery = competitor?.saleEvery ?? 60;
  const inSale = (day + Math.floor(phase * saleEvery)) % saleEvery < 6;
  const off = inSale ? 0.75 + unit(product.sku, who, 'sale', Math.floor(day / saleEvery)) * 0.1 : 1;
  const inStock = (day + Math.floor(phase * 53)) % 53 >= 3;
  return { price: round99(product.base_price * level * drift * off), inStock };
}
