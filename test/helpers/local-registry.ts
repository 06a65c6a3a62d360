import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

/**
 * An npm registry on 127.0.0.1 serving the packages this checkout has installed (packed from
 * node_modules), so a test can `npm install` into a new project outside the repository as a
 * user would (npm resolving versions and dependencies from a registry) without leaving this
 * machine. Not a test file.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
/** In the checkout itself (the compiled test tree links its package.json there), kept between runs. */
const PACKED = path.join(path.dirname(fs.realpathSync(path.join(ROOT, 'package.json'))), '.test-cache', 'packed');

export interface LocalRegistry {
  url: string;
  /** Environment for npm: this registry, a cache of its own, no audit, fund or update notices. */
  env: Record<string, string>;
  close(): Promise<void>;
}

interface Packed {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  /** The rest of the manifest npm reads from a registry (bin links, engines). */
  extra: Record<string, unknown>;
  file: string;
  integrity: string;
  shasum: string;
}

/** `npm pack` of a directory into `dir` (scripts off: node_modules holds built packages). */
export async function pack(directory: string, dir: string, opts: { scripts?: boolean } = {}): Promise<string> {
  const { stdout } = await run(
    'npm',
    ['pack', directory, '--pack-destination', dir, '--json', ...(opts.scripts ? [] : ['--ignore-scripts'])],
    {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, npm_config_update_notifier: 'false' },
    },
  );
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string }[];
  return path.join(dir, info!.filename);
}

/** Every file under `dir`, relative to it, sorted. */
function filesUnder(dir: string, rel = ''): string[] {
  return fs
    .readdirSync(path.join(dir, rel), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(dir, path.join(rel, e.name)) : [path.join(rel, e.name)]))
    .sort();
}

/** The client's files that `npm pack` reads (its prepack builds dist/ from them). */
const CLIENT_INPUTS = ['package.json', 'tsconfig.json', 'README.md', 'src'];
/** Packages whose code or types the client's build reads (from the repository's node_modules). */
const CLIENT_TOOLCHAIN = ['typescript', 'openapi-fetch', 'openapi-typescript-helpers'];

/**
 * What the client's tarball is made of: its files as packed, the versions of the compiler and of
 * the dependencies whose types its declarations use, node's (and so npm's) version.
 */
function clientPackKey(real: string): string {
  const hash = crypto.createHash('sha256');
  hash.update(`node ${process.version}\n`);
  for (const name of CLIENT_TOOLCHAIN) {
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
      version: string;
    };
    hash.update(`${name}@${manifest.version}\n`);
  }
  for (const input of CLIENT_INPUTS) {
    const full = path.join(real, input);
    const files = fs.statSync(full).isDirectory() ? filesUnder(full).map((f) => path.join(input, f)) : [input];
    for (const f of files)
      hash
        .update(`${f}\0`)
        .update(fs.readFileSync(path.join(real, f)))
        .update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * `npm pack` of clients/typescript as a fresh clone would pack it: its files without dist/
 * (its prepack builds it), copied to a directory of their own so that the checkout's build,
 * which the CLI runs from, is not touched meanwhile. Returns the tarball's path in `dir`.
 *
 * Packed once per content (CLIENT_INPUTS, the toolchain's versions: clientPackKey) and kept in
 * .test-cache/packed: the pack's prepack type-checks and compiles the client (~10 CPU-s), and the
 * same files give the same tarball. Both test passes and every file that packs the client
 * (test/client/package.test.ts, test/docs/examples.test.ts) share it; a clean checkout packs anew.
 */
export async function packClient(dir: string): Promise<string> {
  const real = path.dirname(fs.realpathSync(path.join(ROOT, 'clients/typescript/package.json')));
  const manifest = JSON.parse(fs.readFileSync(path.join(real, 'package.json'), 'utf8')) as { version: string };
  const kept = path.join(PACKED, `client-${clientPackKey(real)}.tgz`);
  // The name npm gives it: pricehound-client-0.1.0.tgz.
  const target = path.join(dir, `pricehound-client-${manifest.version}.tgz`);
  if (!fs.existsSync(kept)) {
    const clone = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-client-clone-'));
    try {
      for (const f of CLIENT_INPUTS)
        fs.cpSync(path.join(real, f), path.join(clone, f), { recursive: true, dereference: true });
      // The compiler and the dependencies' types, as `npm install` at the repository root provides them.
      fs.symlinkSync(path.join(path.dirname(real), '../node_modules'), path.join(clone, 'node_modules'));
      const fresh = await pack(clone, dir, { scripts: true });
      assert.equal(fresh, target, 'npm names the tarball as expected');
      fs.mkdirSync(PACKED, { recursive: true });
      fs.copyFileSync(fresh, `${kept}.${process.pid}`);
      fs.renameSync(`${kept}.${process.pid}`, kept);
      return fresh;
    } finally {
      fs.rmSync(clone, { recursive: true, force: true });
    }
  }
  fs.copyFileSync(kept, target);
  return target;
}

/** Serves `names` (packages installed in this checkout's node_modules) and their dependencies. */
export async function startLocalRegistry(names: string[]): Promise<LocalRegistry> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-registry-'));
  const packed = new Map<string, Packed>();
  const queue = [...names];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (packed.has(name)) continue;
    const source = path.join(ROOT, 'node_modules', name);
    const manifest = JSON.parse(fs.readFileSync(path.join(source, 'package.json'), 'utf8')) as {
      version: string;
      dependencies?: Record<string, string>;
      bin?: unknown;
      engines?: unknown;
      type?: unknown;
    };
    // Packed once per version and kept in .test-cache (typescript takes seconds to pack).
    const kept = path.join(PACKED, `${name.replace('/', '+')}@${manifest.version}.tgz`);
    if (!fs.existsSync(kept)) {
      fs.mkdirSync(PACKED, { recursive: true });
      const fresh = await pack(source, dir);
      fs.renameSync(fresh, `${kept}.${process.pid}`);
      fs.renameSync(`${kept}.${process.pid}`, kept);
    }
    const file = path.join(dir, `${name.replace('/', '-').replace('@', '')}-${manifest.version}.tgz`);
    fs.copyFileSync(kept, file);
    const bytes = fs.readFileSync(file);
    packed.set(name, {
      name,
      version: manifest.version,
      dependencies: manifest.dependencies ?? {},
      extra: Object.fromEntries(
        Object.entries({ bin: manifest.bin, engines: manifest.engines }).filter(([, v]) => v !== undefined),
      ),
      file: path.basename(file),
      integrity: `sha512-${crypto.createHash('sha512').update(bytes).digest('base64')}`,
      shasum: crypto.createHash('sha1').update(bytes).digest('hex'),
    });
    queue.push(...Object.keys(manifest.dependencies ?? {}));
  }

  const server = http.createServer((req, res) => {
    const url = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    const tarball = /^\/-\/(.+\.tgz)$/.exec(url);
    if (tarball) {
      const p = [...packed.values()].find((x) => x.file === tarball[1]);
      if (!p) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      return void fs.createReadStream(path.join(dir, p.file)).pipe(res);
    }
    const p = packed.get(url.slice(1));
    if (!p) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        name: p.name,
        'dist-tags': { latest: p.version },
        versions: {
          [p.version]: {
            name: p.name,
            version: p.version,
            dependencies: p.dependencies,
            ...p.extra,
            dist: { tarball: `${base}/-/${encodeURIComponent(p.file)}`, integrity: p.integrity, shasum: p.shasum },
          },
        },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    env: {
      npm_config_registry: url,
      npm_config_cache: path.join(dir, 'cache'),
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
      npm_config_loglevel: 'warn',
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          fs.rmSync(dir, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}
