// The house conventions that tools check (issue 27), in one place: test/architecture/conventions.test.ts
// runs them in CI and `npm run docs:routes` writes the URL -> file table of docs/ARCHITECTURE.md.
//   - an operation lives in src/<area>/routes/<operation-id-in-kebab-case>.ts (one file per
//     operation; an update-x.ts file may also register PATCH as patchX, the same operation);
//   - every SQL statement in src/ starts with a `/* name */` comment;
//   - docs/ARCHITECTURE.md's route table is the one this module renders from the OpenAPI document.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** Every TypeScript file under `dir` (relative to `root`), sorted. */
export function sourceFiles(root: string, dir = 'src'): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(path.join(root, d), { withFileTypes: true })) {
      const rel = path.posix.join(d, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(rel);
    }
  };
  walk(dir);
  return out.sort();
}

export const camelCase = (kebab: string) => kebab.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
export const kebabCase = (camel: string) => camel.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export interface OperationSite {
  operationId: string;
  file: string;
  line: number;
}

/** Every `operationId: ...` in src/, with each string literal its expression can take. */
export function operationSites(root: string): { sites: OperationSite[]; dynamic: string[] } {
  const sites: OperationSite[] = [];
  const dynamic: string[] = [];
  for (const file of sourceFiles(root)) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    if (!text.includes('operationId')) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isPropertyAssignment(node) && node.name.getText(source) === 'operationId') {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        const literals: string[] = [];
        const collect = (n: ts.Node) => {
          if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) literals.push(n.text);
          else if (ts.isConditionalExpression(n)) {
            collect(n.whenTrue);
            collect(n.whenFalse);
          } else if (ts.isParenthesizedExpression(n)) collect(n.expression);
          // The /v1 aliases' ids are derived in the composition root (src/app.ts); a route file writes its own.
          else if (/\/routes\//.test(file))
            dynamic.push(
              `${file}:${line}: operationId is computed (${n.getText(source).slice(0, 60)}); write it as a string literal`,
            );
        };
        collect(node.initializer);
        for (const operationId of literals) sites.push({ operationId, file, line });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { sites, dynamic };
}

/** What breaks "operationId == its route file's name"; empty when the tree keeps the rule. */
export function operationIdProblems(root: string): string[] {
  const { sites, dynamic } = operationSites(root);
  const problems = [...dynamic];
  const byFile = new Map<string, string[]>();
  for (const s of sites) byFile.set(s.file, [...(byFile.get(s.file) ?? []), s.operationId]);
  const seen = new Map<string, string>();
  for (const s of sites) {
    const where = `${s.file}:${s.line}`;
    const other = seen.get(s.operationId);
    if (other && other !== s.file) problems.push(`${where}: operationId ${s.operationId} is also in ${other}`);
    seen.set(s.operationId, s.file);
    const m = /^src\/(.+)\/routes\/([a-z0-9-]+)\.ts$/.exec(s.file);
    if (!m) {
      problems.push(`${where}: operation ${s.operationId} belongs in src/<area>/routes/${kebabCase(s.operationId)}.ts`);
      continue;
    }
    const named = camelCase(m[2]!);
    if (s.operationId === named) continue;
    // PUT and PATCH are one operation under two methods (docs/API-DECISIONS.md): patchX beside updateX.
    const patchTwin =
      named.startsWith('update') &&
      s.operationId === `patch${named.slice('update'.length)}` &&
      byFile.get(s.file)!.includes(named);
    if (!patchTwin)
      problems.push(
        `${where}: operationId ${s.operationId} differs from its file's name (${named}); rename the file to routes/${kebabCase(s.operationId)}.ts`,
      );
  }
  return problems;
}

export interface SqlStatement {
  file: string;
  line: number;
  name: string | null;
  text: string;
}

/**
 * What a statement looks like where it starts: a keyword that begins one, then what follows that
 * keyword in SQL (not English: "select a product" is not a statement). Transaction control
 * (begin, commit, rollback, savepoint) is the db layer's plumbing and needs no name.
 */
const STATEMENT_START =
  /^\s*(select\s+(distinct\s+)?(\*|\d|'|\(|\$|[a-z_]\w*(\.[\w*]+)?\s*(,|\(|\bas\b|\bfrom\b|::|$))|insert\s+into\s|update\s+[\w${}]+(\s+\w+)?\s+set\s|delete\s+from\s|with\s+(recursive\s+)?\w+(\s*\([^)]*\))?\s+as\s+(materialized\s+|not\s+materialized\s+)?\(|create\s+(table|(unique\s+)?index|schema|extension|temp|or\s+replace|function|trigger|sequence|type)\s|alter\s+(table|index|sequence|type)\s|drop\s+(table|index|schema|function|trigger|sequence|type)\s|lock\s+table\s|truncate\s|vacuum\b|analyze\s+[\w${]|listen\s+(\$\{|")|unlisten\s+(\$\{|"|\*)|copy\s+\w+\s|(set|reset)\s+(local\s+|session\s+)?[a-z_]+\.?[a-z_]*\s*(to|=|$)|values\s*\()/i;

const NAME = /^\s*\/\*\s*([A-Za-z][\w.:-]*)\s*\*\/\s*/;

/** A string or template literal's text as written (a template with its substitutions). */
function literalText(node: ts.Node, source: ts.SourceFile): string | null {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node))
    return node.getText(source).slice(1, -1);
  return null;
}

/**
 * Every SQL statement written in src/ (any file, not only sql.ts): each string or template
 * literal that starts like a statement, or with a `/* name *\/` comment followed by one.
 */
export function sqlStatements(root: string, files = sourceFiles(root)): SqlStatement[] {
  const out: SqlStatement[] = [];
  for (const file of files) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      const lead = literalText(node, source);
      if (lead !== null) {
        const named = NAME.exec(lead);
        const rest = named ? lead.slice(named[0].length) : lead;
        // A statement whose body follows its name in a substitution (`/* x */ ${SQL}`) counts, named.
        // SQL keywords are written in one case ("Vacuum sealer" is a product name, not a statement).
        const word = /^\s*([A-Za-z]+)/.exec(rest)?.[1] ?? '';
        const oneCase = word === word.toLowerCase() || word === word.toUpperCase();
        if ((oneCase && STATEMENT_START.test(rest)) || (named && /^\$\{/.test(rest))) {
          const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
          out.push({ file, line, name: named ? named[1]! : null, text: lead.trim().replace(/\s+/g, ' ').slice(0, 80) });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}

export function unnamedStatements(root: string, files?: string[]): string[] {
  return sqlStatements(root, files)
    .filter((s) => s.name === null)
    .map((s) => `${s.file}:${s.line}: an SQL statement without a leading /* name */ comment: ${s.text}`);
}

// ---------------------------------------------------------------------------------------------
// The URL -> file table of docs/ARCHITECTURE.md

export const TABLE_BEGIN =
  '<!-- routes:begin (generated by `npm run docs:routes` from the OpenAPI document; test/architecture/conventions.test.ts keeps it current) -->';
export const TABLE_END = '<!-- routes:end -->';

interface Document {
  paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>>;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];

/** The area a file belongs to: src/<area>/ (src/prices/<part>/ for the price areas). */
export const areaOf = (file: string) => /^src\/(prices\/[^/]+|[^/]+)\//.exec(file)?.[1] ?? file;

/**
 * One row per operation of the document (the /v1 aliases left out): method, path, operationId,
 * the file that serves it. A nested URL served by another area than the one serving its first
 * segment is marked, so where /products/{id}/listings lives is one look away.
 */
export function routeTable(doc: Document, root: string): string {
  const files = new Map(operationSites(root).sites.map((s) => [s.operationId, s.file]));
  const rows: { method: string; url: string; operationId: string; file: string }[] = [];
  for (const [url, item] of Object.entries(doc.paths)) {
    if (url.startsWith('/v1/')) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!op?.operationId) continue;
      rows.push({
        method: method.toUpperCase(),
        url,
        operationId: op.operationId,
        file: files.get(op.operationId) ?? '(not found in src/)',
      });
    }
  }
  const first = (url: string) => url.replace(/^\/api\/v1/, '').split('/')[1] ?? '';
  const owner = new Map<string, string>();
  for (const r of rows) {
    const rest = r.url.replace(/^\/api\/v1/, '');
    if (rest === `/${first(r.url)}` && !owner.has(first(r.url))) owner.set(first(r.url), areaOf(r.file));
  }
  const lines = ['| Method | Path | operationId | File |', '| --- | --- | --- | --- |'];
  for (const r of rows.sort(
    (a, b) =>
      a.url.localeCompare(b.url) || METHODS.indexOf(a.method.toLowerCase()) - METHODS.indexOf(b.method.toLowerCase()),
  )) {
    const head = owner.get(first(r.url));
    const elsewhere =
      head !== undefined && head !== areaOf(r.file)
        ? ` (under \`/${first(r.url)}\`, served by ${areaOf(r.file)}/)`
        : '';
    lines.push(`| ${r.method} | \`${r.url}\` | ${r.operationId} | \`${r.file}\`${elsewhere} |`);
  }
  return lines.join('\n');
}

/** docs/ARCHITECTURE.md with its route table replaced by `table`. */
export function withRouteTable(markdown: string, table: string): string {
  const a = markdown.indexOf(TABLE_BEGIN);
  const b = markdown.indexOf(TABLE_END);
  if (a < 0 || b < a) throw new Error(`docs/ARCHITECTURE.md has no ${TABLE_BEGIN} ... ${TABLE_END} section`);
  return `${markdown.slice(0, a)}${TABLE_BEGIN}\n${table}\n${markdown.slice(b)}`;
}
