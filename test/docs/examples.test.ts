import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { useTestApp } from '../helpers/app.js';
import { type LocalRegistry, packClient, startLocalRegistry } from '../helpers/local-registry.js';

/**
 * Docs that cannot rot (docs/DOCS-TESTS.md): every fenced block whose info string is
 * `sh test` (or `sh test status=NNN`) in README.md and docs/*.md runs here with bash against a
 * real server listening on 127.0.0.1, with BASE and PRICEHOUND_KEY set (a new account per
 * guide). The blocks of one guide run in order in one shell, so a later block can use the
 * variables an earlier one set. Each block must succeed; `curl` answers of 400 and above fail it
 * unless the block says which status it shows (`status=422`), and then the last answer must have
 * exactly that status.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Block {
  line: number;
  status: number | undefined;
  code: string;
  /** A ```js test file=NAME``` (or ts) block: its text is written to NAME, for a later sh block to run. */
  file?: string;
}

export function testedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(?:sh test(?:\s+status=(\d{3}))?|(?:js|ts) test\s+file=([\w.-]+))\s*$/.exec(lines[i]!);
    if (!open) continue;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]!); j++) body.push(lines[j]!.slice(open[1]!.length));
    blocks.push({
      line: i + 1,
      status: open[2] ? Number(open[2]) : undefined,
      code: body.join('\n'),
      ...(open[3] ? { file: open[3] } : {}),
    });
    i = j;
  }
  return blocks;
}

/** curl with its status remembered, failing on >= 400 unless the block expects a status. */
const PRELUDE = `set -euo pipefail
curl() {
  local out code
  out=$(command curl -sS -w '\\n%{http_code}' "$@") || return $?
  code=\${out##*$'\\n'}
  printf '%s\\n' "\${out%$'\\n'*}"
  echo "$code" > "$STATUS_FILE"
  if [ -z "\${EXPECT_STATUS:-}" ] && [ "$code" -ge 400 ]; then echo "curl: HTTP $code" >&2; return 22; fi
}
`;

function script(blocks: Block[]): string {
  return (
    PRELUDE +
    blocks
      .map((b) => {
        if (b.file) return `cat > ${b.file} <<'PRICEHOUND_FILE_EOF'\n${b.code}\nPRICEHOUND_FILE_EOF\n`;
        const expect = b.status ? `EXPECT_STATUS=${b.status}` : 'EXPECT_STATUS=';
        const check = b.status
          ? `[ "$(cat "$STATUS_FILE")" = "${b.status}" ] || { echo "block at line ${b.line}: expected HTTP ${b.status}, got $(cat "$STATUS_FILE")" >&2; exit 1; }`
          : '';
        return `echo "@@block ${b.line}" >&2\n${expect}\n${b.code}\n${check}\n`;
      })
      .join('\n')
  );
}

const guides = [
  'README.md',
  'clients/typescript/README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]
  .map((file) => ({ file, blocks: testedBlocks(fs.readFileSync(path.join(ROOT, file), 'utf8')) }))
  .filter((g) => g.blocks.length > 0);

describe('the curl examples of the guides run against a real server', () => {
  const t = useTestApp();
  let base: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-docs-'));
  before(async () => {
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('finds tested examples in the guides', () => {
    assert.ok(
      guides.some((g) => g.file === 'README.md'),
      'the README quick start is tested',
    );
  });

  it('parses blocks, their status and indentation, and files to write', () => {
    const md =
      'x\n```sh test\ncurl a\n```\n  ```sh test status=404\n  curl b\n  ```\n```sh\nnot tested\n```\n```js test file=a.mjs\nconsole.log(1)\n```\n```ts\nnot tested\n```\n';
    assert.deepEqual(testedBlocks(md), [
      { line: 2, status: undefined, code: 'curl a' },
      { line: 5, status: 404, code: 'curl b' },
      { line: 11, status: undefined, code: 'console.log(1)', file: 'a.mjs' },
    ]);
  });

  // The client's README installs the packed client into a new project: from a registry on
  // 127.0.0.1 (test/helpers/local-registry.ts), made when a guide names CLIENT_TARBALL.
  let client: Promise<{ env: Record<string, string> }> | undefined;
  const registries: LocalRegistry[] = [];
  after(async () => {
    for (const r of registries) await r.close();
  });
  const clientEnv = () =>
    (client ??= (async () => {
      const registry = await startLocalRegistry(['openapi-fetch']);
      registries.push(registry);
      const tarball = await packClient(dir);
      return { env: { ...registry.env, CLIENT_TARBALL: tarball } };
    })());

  for (const guide of guides) {
    const npm = guide.blocks.some((b) => b.code.includes('$CLIENT_TARBALL'));
    it(`${guide.file}: ${guide.blocks.length} example(s)`, { timeout: npm ? 240_000 : 120_000 }, async () => {
      const { key } = await t.newKey('business');
      const cwd = path.join(dir, guide.file.replace(/[/.]/g, '-'));
      fs.mkdirSync(cwd);
      const extra = npm ? (await clientEnv()).env : {};
      // Asynchronous: the server answering the examples runs in this process.
      const r = await promisify(execFile)('bash', ['-c', script(guide.blocks)], {
        cwd,
        env: {
          PATH: process.env.PATH,
          HOME: cwd,
          BASE: base,
          PRICEHOUND_KEY: key,
          STATUS_FILE: path.join(cwd, 'status'),
          ...extra,
        },
        encoding: 'utf8',
        timeout: npm ? 180_000 : 60_000,
      }).then(
        (ok) => ({ status: 0, stdout: ok.stdout, stderr: ok.stderr }),
        (err: { code?: number; stdout?: string; stderr?: string }) => ({
          status: err.code ?? 1,
          stdout: err.stdout ?? '',
          stderr: err.stderr ?? '',
        }),
      );
      const failedAt = [...r.stderr.matchAll(/^@@block (\d+)$/gm)].at(-1)?.[1];
      assert.equal(
        r.status,
        0,
        `${guide.file}, the block at line ${failedAt}:\n${r.stderr.replace(/^@@block \d+\n/gm, '')}\n${r.stdout}`,
      );
    });
  }
});
