import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

/** Where `npm run build` puts the dashboard (vite, dashboard/vite.config.ts): from src/dashboard or dist/dashboard, two up. */
export const DASHBOARD_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dashboard/dist');

/** Content types by extension; anything else is served as bytes (and `nosniff` keeps it so). */
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/** Text is worth compressing; images and fonts already are. */
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.webmanifest', '.txt']);

export interface DashboardFile {
  body: Buffer;
  /** Precomputed at load, for text files over 1 KiB that shrink. */
  br: Buffer | undefined;
  gzip: Buffer | undefined;
  type: string;
  /** Vite's content-hashed output (`assets/`): the name changes with the content, so it may be cached for good. */
  immutable: boolean;
}

/**
 * The built dashboard read into memory once, keyed by its path relative to the folder
 * (`index.html`, `assets/index-3f9a.js`). Requests are answered by looking their path up in this
 * map and nothing else: no file system path is ever built from a URL, so `..`, encoded slashes,
 * symlinks or NUL bytes cannot reach a file outside it. The whole build is ~100 KB.
 * Returns null when the folder has no index.html (the dashboard was not built).
 */
export function loadDashboard(dir: string): Map<string, DashboardFile> | null {
  if (!fs.existsSync(path.join(dir, 'index.html'))) return null;
  const files = new Map<string, DashboardFile>();
  const walk = (sub: string) => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub === '' ? entry.name : `${sub}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.isFile()) files.set(rel, load(path.join(dir, rel), rel));
    }
  };
  walk('');
  return files;
}

function load(file: string, rel: string): DashboardFile {
  const body = fs.readFileSync(file);
  const ext = path.extname(rel).toLowerCase();
  let br: Buffer | undefined;
  let gzip: Buffer | undefined;
  if (COMPRESSIBLE.has(ext) && body.length > 1024) {
    br = zlib.brotliCompressSync(body, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    });
    gzip = zlib.gzipSync(body, { level: 9 });
    if (br.length >= body.length) br = undefined;
    if (gzip.length >= body.length) gzip = undefined;
  }
  return { body, br, gzip, type: TYPES[ext] ?? 'application/octet-stream', immutable: rel.startsWith('assets/') };
}
