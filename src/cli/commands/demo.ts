import { loadConfigOrExit } from '../../config.js';
import { type Command, note, out } from '../command.js';
import { EXIT, UsageError } from '../errors.js';
import { progress } from '../progress.js';
import { type DemoProduct, demoProducts } from '../demo/catalogue.js';
import type { OwnerOperations } from '../../owner-channel/operations.js';
import { DataDirInUseError } from '../../db/data-dir-lock.js';
import { seedDemo } from '../demo/seed.js';
import { startDemoShop } from '../demo/shop.js';

/** The database side (most of the application), loaded when the command runs, not for --help. */
const target = () => import('../target.js');

/** The name of the demo's API keys: how a second run finds the demo account. */
export const DEMO_KEY_NAME = 'pricehound demo';
const DEFAULT_SHOP_PORT = 4791;
const MAX_PRODUCTS = demoProducts(1000).length;

function wholeNumber(
  values: Record<string, unknown>,
  name: string,
  fallback: number,
  min: number,
  max: number,
  command: string,
): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || n < min || n > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${String(raw)}"`, command);
  }
  return n;
}

/**
 * Finds the demo account or creates and fills it; returns a new key for it. The account is
 * found by its keys' name, so a second run adds nothing but a key.
 */
async function fill(ops: OwnerOperations, products: DemoProduct[], days: number, shopUrl: string): Promise<string> {
  const existing = (await ops.listKeys()).find((k) => k.name === DEMO_KEY_NAME && k.revoked_at === null);
  if (existing) {
    note(`The demo account ${existing.account_id} exists already: its data stays as it is; here is a new key for it.`);
    return (await ops.createKey({ plan: 'business', name: DEMO_KEY_NAME, accountId: existing.account_id })).key;
  }
  const k = await ops.createKey({ plan: 'business', name: DEMO_KEY_NAME });
  const bar = progress();
  const r = await seedDemo(
    (await target()).ownerClient(ops, k.key),
    { products, days, shopUrl, checkIntervalSeconds: 3600 },
    bar,
  );
  bar.done(
    `Created demo account ${k.account_id}: ${r.products} products, ${r.competitors} competitors, ${r.listings} listings, ` +
      `${r.observations} price observations over ${days} days, ${r.alerts} alert rules.`,
  );
  return k.key;
}

export const demoCommand: Command = {
  name: 'demo',
  positionals: [0, 0],
  options: {
    'shop-port': { type: 'string' },
    products: { type: 'string' },
    days: { type: 'string' },
    'no-serve': { type: 'boolean' },
  },
  help: `Usage: pricehound demo [--shop-port PORT] [--products N] [--days N] [--no-serve]

Shows pricehound with data in it, within a minute:
  - an account and an API key (printed; plan business),
  - a catalogue of ${MAX_PRODUCTS} kitchen and electronics products (brands, SKUs, EUR prices),
  - ${4} competitors whose listings point at a small demo shop this command serves on
    127.0.0.1:PORT: product pages with JSON-LD prices that drift, go on sale and out of stock,
  - months of daily price history of every product at every competitor and in our own shop,
    so the dashboard's charts are full from the start,
  - two alert rules, each with a test alert event,
then starts the service (API, dashboard and check worker, as \`pricehound start\`) and prints
the dashboard's address and the key. Outbound requests (checks, webhooks) may reach the demo
shop's address, 127.0.0.1:PORT, and nothing else on this machine, whichever key asks.

Running it again does not add a second catalogue: it finds the demo account (by its key's
name, "${DEMO_KEY_NAME}"), prints a new key for it, and serves the shop and the service again.
Use the same --shop-port every time: the listings point at it.
When a server already runs on this DATA_DIR, the data goes in through it and this command
only serves the demo shop (for its checks, that server needs ALLOW_LOOPBACK_TARGETS=true,
which opens all of loopback to every key: docs/CONFIGURATION.md).

Options:
  --shop-port PORT   the demo shop's port on 127.0.0.1 (default ${DEFAULT_SHOP_PORT})
  --products N       how many products, 1 to ${MAX_PRODUCTS} (default ${MAX_PRODUCTS})
  --days N           days of history, 1 to 366 (default 120)
  --no-serve         create the data, print the key and exit, serving nothing
  -h, --help         show this help

Configuration as for \`pricehound start\` (PORT, HOST, DATA_DIR, DATABASE_URL, ...). Logs are
quiet (LOG_LEVEL warn) unless LOG_LEVEL is set. Ctrl-C stops the service and the shop.
`,
  async run(values) {
    const shopPort = wholeNumber(values, 'shop-port', DEFAULT_SHOP_PORT, 0, 65535, this.name);
    const productCount = wholeNumber(values, 'products', MAX_PRODUCTS, 1, MAX_PRODUCTS, this.name);
    const days = wholeNumber(values, 'days', 120, 1, 366, this.name);
    const loaded = loadConfigOrExit();
    const products = demoProducts(productCount);
    // The shop listens first: its address goes into the listings, and the first checks come soon.
    const shop = await startDemoShop(products, shopPort);
    // Outbound requests may reach the shop and nothing else on this machine: not all of
    // loopback, which would let any key make the service fetch local services and read their
    // answers in check records and the delivery log (docs/CONFIGURATION.md).
    const config = {
      ...loaded,
      allowTargets: [shop.target],
      logLevel: process.env.LOG_LEVEL ? loaded.logLevel : 'warn',
    };
    try {
      if (values['no-serve']) {
        const ops = await (await target()).openOperations(config);
        try {
          if (ops.via.kind === 'direct') await ops.migrate();
          out(`API key: ${await fill(ops, products, days, shop.url)}`);
        } finally {
          await ops.close();
        }
        await shop.close();
        out('Run `pricehound demo` again to serve the shop and the service (the data stays).');
        return EXIT.ok;
      }
      // The service starts first, so the dashboard is up while the data goes in. When a server
      // already owns DATA_DIR, the data goes in through it and this process serves the shop.
      const { startServer } = await import('../../server.js');
      let base = `http://${config.host}:${config.port}`;
      let ops: OwnerOperations;
      try {
        const started = await startServer(config, { api: true, worker: true });
        base = started.url ?? base;
        ops = started.operations;
      } catch (err) {
        if (!(err instanceof DataDirInUseError)) throw err;
        ops = await (await target()).openOperations(config);
        note(
          `A server already runs on DATA_DIR ${config.dataDir}: the data goes in through it. This process serves the demo shop until Ctrl-C.`,
        );
      }
      const key = await fill(ops, products, days, shop.url);
      out(`Dashboard: ${base}/dashboard (sign in with the API key below)`);
      out(`API: curl -H "Authorization: Bearer $PRICEHOUND_KEY" ${base}/api/v1/products`);
      out(`API key: ${key}`);
    } catch (err) {
      await shop.close();
      throw err;
    }
    return 'running';
  },
};
