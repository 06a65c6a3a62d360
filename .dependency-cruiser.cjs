/**
 * The layering of src/, checked in CI (`npm run lint:layers`). Written down once, here; the
 * prose is docs/ARCHITECTURE.md.
 *
 *   top        app.ts, context.ts, runtime.ts, server.ts, jobs/tasks.ts, cli/   compose everything
 *   areas      auth ratelimit usage products competitors listings checks prices
 *              exchange-rates openapi ops owner-channel dashboard                one domain each
 *   toolkit    http lists batches position jobs fetcher extraction               shared by areas
 *   foundation config.ts ids.ts db money threads                                  below everything
 *
 * Each layer imports only from its own and the layers below it; an area reaches another area
 * through its public modules (index, service, schemas), never through its sql.ts; nothing has
 * a cycle.
 */
const TOP = '^src/(app|context|runtime|server)\\.ts$|^src/jobs/tasks\\.ts$|^src/cli/';
const AREA_NAMES = 'dashboard|auth|ratelimit|usage|products|competitors|listings|checks|prices|exchange-rates|openapi|ops|owner-channel|events|alerts|webhooks';
const AREAS = `^src/(${AREA_NAMES})/`;
const TOOLKIT = '^src/(http|lists|batches|position|fetcher|extraction)/|^src/jobs/(?!tasks\\.ts$)';
const FOUNDATION = '^src/(config|ids|time)\\.ts$|^src/(db|money|threads)/';

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
      comment: 'The composition root (app, context, runtime, server, the background-task registry, the CLI) sits above everything.',
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
      comment: 'config, ids, db, money and threads sit below the HTTP toolkit, lists, fetcher and extraction.',
      from: { path: FOUNDATION },
      to: { path: TOOLKIT },
    },
    {
      name: 'no-other-areas-sql',
      severity: 'error',
      comment: "An area's SQL is its own: another area calls its service or public modules instead.",
      from: { path: '^src/([^/]+)/' },
      to: { path: `^src/(${AREA_NAMES})/.*sql[.]ts$`, pathNot: '^src/$1/' },
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
