import type { Command } from '../command.js';

/**
 * The command table: what `pricehound --help` and the group helps list, and where each command's
 * module is. A process loads the module of the command it runs and no other (`--help` and the
 * group helps load none): the commands' modules bring in the typed client, the demo catalogue,
 * the auth tables, ..., each process paying for all of them to print a list of names.
 */
export interface CommandEntry {
  /** As typed: 'keys create'. */
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The command itself (help text, options, run): its module, imported on first call. */
  load(): Promise<Command>;
}

export const COMMANDS: CommandEntry[] = [
  {
    name: 'start',
    summary: 'Run the service: API and check worker (the default command)',
    load: async () => (await import('./start.js')).startCommand,
  },
  { name: 'serve', summary: 'Run the HTTP API only', load: async () => (await import('./start.js')).serveCommand },
  {
    name: 'worker',
    summary: 'Run the check worker only (needs DATABASE_URL)',
    load: async () => (await import('./start.js')).workerCommand,
  },
  {
    name: 'migrate',
    summary: 'Apply pending database migrations',
    load: async () => (await import('./migrate.js')).migrateCommand,
  },
  {
    name: 'keys create',
    summary: 'Create an API key (shown once)',
    load: async () => (await import('./keys.js')).keysCreate,
  },
  {
    name: 'keys list',
    summary: 'List API keys (never the keys themselves)',
    load: async () => (await import('./keys.js')).keysList,
  },
  {
    name: 'keys revoke',
    summary: 'Revoke an API key; refused from its next request on',
    load: async () => (await import('./keys.js')).keysRevoke,
  },
  {
    name: 'prices rollup',
    summary: 'Roll up old price observations, keeping day-level history exact',
    load: async () => (await import('./prices.js')).pricesRollup,
  },
  {
    name: 'import products',
    summary: 'Import products from a CSV file (resumable)',
    load: async () => (await import('./import-products.js')).importProducts,
  },
  {
    name: 'import listings',
    summary: "Import competitors' listings from a CSV file (resumable)",
    load: async () => (await import('./import-listings.js')).importListings,
  },
  {
    name: 'export products',
    summary: 'Export products as CSV or JSON lines',
    load: async () => (await import('./export.js')).exportProducts,
  },
  {
    name: 'export prices',
    summary: 'Export price observations as CSV or JSON lines, in one request',
    load: async () => (await import('./export.js')).exportPrices,
  },
  {
    name: 'demo',
    summary: 'Create a demo account with products, competitors and history; run it',
    load: async () => (await import('./demo.js')).demoCommand,
  },
];
