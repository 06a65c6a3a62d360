import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// One client for every caller (issue 24): the dashboard and the CLI reach the API only through
// @pricehound/client, whose paths, queries and bodies tsc checks against the OpenAPI document.
// A hand-written request, error class or CSV reader beside it fails here.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function sources(dir: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true })) {
      const rel = path.join(d, e.name);
      if (e.isDirectory()) walk(rel);
      else if (/\.ts$/.test(e.name) && !e.name.endsWith('.d.ts'))
        out.push({ file: rel, text: fs.readFileSync(path.join(ROOT, rel), 'utf8') });
    }
  };
  walk(dir);
  return out;
}

const dashboard = sources('dashboard/src');
const cli = sources('src/cli');

describe('one typed client for the dashboard and the CLI', () => {
  it('the dashboard has no hand-written request: every /api/v1 path is a call of the typed client', () => {
    assert.ok(dashboard.length > 10);
    for (const { file, text } of dashboard) {
      assert.doesNotMatch(text, /\bfetch\(|XMLHttpRequest|new Request\(|navigator\.sendBeacon/, file);
      for (const m of text.matchAll(/['`]\/(api\/)?v1\/[^'`]*['`]/g)) {
        const before = text.slice(Math.max(0, m.index - 60), m.index);
        // A call's path, or a type read from the generated ones by path (SuccessData<...>, Query<...>).
        assert.match(
          before,
          /(\.(GET|POST|PUT|PATCH|DELETE|paginate|pages)\(\s*|\b(SuccessData|Query)<\s*)$/,
          `${file}: ${m[0]} is not the path of a typed call`,
        );
      }
    }
  });

  it("the CLI's account commands send through the client; only its request counter wraps fetch", () => {
    for (const { file, text } of cli) {
      const calls = [...text.matchAll(/\bfetch\(/g)].length;
      assert.equal(calls, file === path.join('src/cli/account.ts') ? 1 : 0, `${file}: ${calls} fetch call(s)`);
      assert.doesNotMatch(text, /from 'csv-parse|from "csv-parse/, `${file} reads CSV with the client's reader`);
    }
  });

  it('has one API error class, one CSV reader and one pagination loop outside the service', () => {
    for (const { file, text } of [...dashboard, ...cli]) {
      // The CLI's own failures (CliError, UsageError) are not API errors; nothing else defines an error class.
      if (file !== path.join('src/cli/errors.ts'))
        assert.doesNotMatch(text, /class \w+ extends \w*Error\b/, `${file} uses the client's errors`);
      assert.doesNotMatch(text, /class \w*ApiError\b/, file);
      // A page may show "next" (a pager) or hand a cursor to the client; looping over cursors is the client's.
      assert.doesNotMatch(
        text,
        /while \(\s*cursor|has_more \? \w+\.pagination\.next_cursor/,
        `${file} pages through the client (paginate, pages, take)`,
      );
      assert.doesNotMatch(
        text,
        /function parseCsv|class \w*CsvReader|function csvRow|function csvCell/,
        `${file} reads and writes CSV with the client's`,
      );
    }
  });
});
