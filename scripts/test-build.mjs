// The compiled tree the test suite runs from (scripts/run-tests.mjs). Loading a test file through
// tsx's loader costs ~2 s more CPU than loading the same modules compiled (every import resolves
// through the loader's thread, and each PGlite worker thread registers it again); with ~140 files
// per pass on a CPU-bound suite that is minutes of CI. esbuild (tsx's own compiler, so the same
// output) compiles every .ts file of the checkout in about a second.
//
// The tree mirrors the checkout, so every path a module finds from import.meta.url (migrations,
// fixtures, package.json, docs, the dashboard's build) resolves as in the checkout: directories
// holding TypeScript are rebuilt with each foo.ts compiled to foo.js beside links to every
// file (foo.ts included); everything else is a symbolic link to the real thing (writes land in the checkout).
// Code that must name the checkout itself (for example ../shared beside it) follows a link back.
import fs from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';

/** Top-level directories whose TypeScript the tests import or run. */
const COMPILED = ['src', 'test', 'scripts', 'clients'];
/** Never mirrored inside those (built output, dependencies). */
const SKIPPED = new Set(['node_modules', 'dist']);

const isSource = (name) => name.endsWith('.ts') && !name.endsWith('.d.ts');

function hasSource(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .some((e) => (e.isDirectory() ? !SKIPPED.has(e.name) && hasSource(path.join(dir, e.name)) : isSource(e.name)));
}

/** Mirrors `rel` (a directory holding TypeScript) into `out`, adding its .ts files to `sources`. */
function mirror(root, out, rel, sources) {
  fs.mkdirSync(path.join(out, rel), { recursive: true });
  for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const child = path.join(rel, e.name);
    if (e.isDirectory() && !SKIPPED.has(e.name) && hasSource(path.join(root, child))) mirror(root, out, child, sources);
    else {
      // Sources are linked too: some tests read them as written (the client's generated types).
      if (!e.isDirectory() && isSource(e.name)) sources.push(child);
      fs.symlinkSync(path.join(root, child), path.join(out, child));
    }
  }
}

/**
 * node_modules, linked entry by entry, but for the workspace packages (the typed client, which
 * the CLI imports as @pricehound/client): those resolve to their sources as compiled into the
 * tree, not to their last build, so the CLI processes the tests start run the client as it is
 * now, and a test that imports the client's sources shares its module instances with them.
 */
function mirrorDependencies(root, out) {
  const modules = path.join(out, 'node_modules');
  fs.mkdirSync(modules);
  const workspaces = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).workspaces ?? [];
  const ours = new Map(
    workspaces.map((w) => [JSON.parse(fs.readFileSync(path.join(root, w, 'package.json'), 'utf8')).name, w]),
  );
  for (const e of fs.readdirSync(path.join(root, 'node_modules'), { withFileTypes: true })) {
    const scoped = e.name.startsWith('@') && [...ours.keys()].some((n) => n.startsWith(`${e.name}/`));
    if (!scoped) {
      fs.symlinkSync(path.join(root, 'node_modules', e.name), path.join(modules, e.name));
      continue;
    }
    fs.mkdirSync(path.join(modules, e.name));
    for (const p of fs.readdirSync(path.join(root, 'node_modules', e.name))) {
      const name = `${e.name}/${p}`;
      const target = path.join(modules, name);
      if (!ours.has(name)) {
        fs.symlinkSync(path.join(root, 'node_modules', name), target);
        continue;
      }
      fs.mkdirSync(target);
      fs.writeFileSync(
        path.join(target, 'package.json'),
        JSON.stringify({ name, type: 'module', exports: { '.': './src/index.js' } }),
      );
      fs.symlinkSync(path.join(out, ours.get(name), 'src'), path.join(target, 'src'));
    }
  }
}

/** Builds the mirror of `root` in `out` (replaced when there); returns `out`. */
export function buildTestTree(root, out) {
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const sources = [];
  for (const e of fs.readdirSync(root, { withFileTypes: true })) {
    if (e.name === '.git' || e.name === '.test-cache') continue;
    if (e.isDirectory() && COMPILED.includes(e.name)) mirror(root, out, e.name, sources);
    else if (e.name === 'node_modules' && e.isDirectory()) mirrorDependencies(root, out);
    else fs.symlinkSync(path.join(root, e.name), path.join(out, e.name));
  }
  buildSync({
    entryPoints: sources.map((f) => path.join(root, f)),
    outbase: root,
    outdir: out,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Stack traces name the .ts lines (node runs with --enable-source-maps).
    sourcemap: 'inline',
    logLevel: 'error',
  });
  return out;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Removes trees of runs that are gone (a run killed before it could clean up). */
export function removeStaleTrees(parent, prefix) {
  if (!fs.existsSync(parent)) return;
  for (const name of fs.readdirSync(parent)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (!alive(pid)) fs.rmSync(path.join(parent, name), { recursive: true, force: true });
  }
}
