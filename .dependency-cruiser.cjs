/**
 * The layering of src/, checked in CI (`npm run lint:layers`). Written down once, here; the
 * prose is docs/ARCHITECTURE.md.
 *
 *   top        app.ts, context.ts, runtime.ts, server.ts, jobs/tasks.ts, cli/   compose everything
 *   areas      auth ratelimit usage products competitors listings checks prices
 *              positions exchange-rates openapi ops owner-channel dashboard email one domain each
 *   toolkit    http pagination batches position jobs fetcher extraction          shared by areas
 *   foundation config.ts ids.ts db money threads                                  below everything
 *
 * Each layer imports only from its own and the layers below it; an area reaches another area
 * through its public face (index.ts, service.ts, schemas.ts at the area's root), never through
 * its internals and never through a file with SQL (any file of the area whose statements are
 * written there, whatever its name); nothing has a cycle.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS config (dependency-cruiser loads it with require)
const fs = require('node:fs');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
const path = require('node:path');
const TOP = '^src/(app|context|runtime|server)\\.ts$|^src/jobs/tasks\\.ts$|^src/cli/';
const AREA_NAMES =
  'dashboard|auth|ratelimit|usage|products|competitors|listings|checks|prices|positions|exchange-rates|openapi|ops|owner-channel|events|alerts|webhooks|email';
const AREAS = `^src/(${AREA_NAMES})/`;
const TOOLKIT = '^src/(http|pagination|batches|position|fetcher|extraction)/|^src/jobs/(?!tasks\\.ts$)';
const FOUNDATION = '^src/(config|ids|time)\\.ts$|^src/(db|money|threads)/';

/**
 * Every file of src/ that writes SQL. Every statement starts with its `/* name *\/` comment
 * (test/architecture/conventions.test.ts), so a string that opens with one is a statement.
 */
const STATEMENT =
  /['"`]\s*\/\*\s*[A-Za-z][\w.:-]*\s*\*\/\s*(select|insert|update|delete|with|create|alter|drop|lock|truncate|vacuum|analyze|listen|unlisten|notify|values|\$\{)/i;
function sqlFiles(root) {
  const out = [];
  const walk = (dir) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (
        /(^|-)sql[.]ts$/.test(e.name) ||
        (e.name.endsWith('.ts') && STATEMENT.test(fs.readFileSync(full, 'utf8')))
      )
        out.push(path.relative(root, full).split(path.sep).join('/'));
    }
  };
  walk(path.join(root, 'src'));
  return out;
}
const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// depcruise runs from the tree it checks (the checkout, or test/architecture's throwaway trees).
const AREA_SQL_FILES = sqlFiles(process.cwd()).filter((f) => new RegExp(`^src/(${AREA_NAMES})/`).test(f));
const AREA_SQL_FILE = AREA_SQL_FILES.length > 0 ? `^(${AREA_SQL_FILES.map(escapeRegExp).join('|')})$` : '^$';
/** What an area shows the others: its index, service and schemas at the area's root. */
const PUBLIC_FACE = `^src/(${AREA_NAMES})/(index|service|schemas)[.]ts$`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes two modules one; split out what both need.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'top-is-imported-by-top-only',
      severity: 'error',
      comment:
        'The composition root (app, context, runtime, server, the background-task registry, the CLI) sits above everything.',
      from: { path: '^src/', pathNot: TOP },
      to: { path: TOP },
    },
    {
      name: 'toolkit-does-not-import-areas',
      severity: 'error',
      comment: 'The shared toolkit sits below the areas that use it.',
      from: { path: `${TOOLKIT}|${FOUNDATION}` },
      to: { path: AREAS },
    },
    {
      name: 'foundation-does-not-import-toolkit',
      severity: 'error',
      comment: 'config, ids, db, money and threads sit below the HTTP toolkit, pagination, fetcher and extraction.',
      from: { path: FOUNDATION },
      to: { path: TOOLKIT },
    },
    {
      name: 'no-other-areas-sql',
      severity: 'error',
      comment:
        "An area's SQL is its own: any file of it that writes a statement (sql.ts or not) is private; another area calls its service instead.",
      from: { path: '^src/([^/]+)/' },
      to: { path: AREA_SQL_FILE, pathNot: '^src/$1/' },
    },
    {
      name: 'areas-meet-at-their-public-face',
      severity: 'error',
      comment:
        "Another area's internals are its own: import its index.ts, service.ts or schemas.ts (re-export there what others need).",
      from: { path: AREAS },
      to: { path: AREAS, pathNot: [`^src/$1/`, PUBLIC_FACE] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type is a dependency of the design, if not of the bundle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
    moduleSystems: ['es6'],
  },
};
