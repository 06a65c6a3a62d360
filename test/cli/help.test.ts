import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { cli, lines } from './helpers/cli.js';

// No command gets as far as opening a database: DATA_DIR must stay empty.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-cli-help-'));
const env = { DATA_DIR: dir, DATABASE_URL: '', REDIS_URL: '', PRICEHOUND_KEY: '' };

/** The commands the top-level help lists: "  keys create     Create an API key". */
function listedCommands(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1]!.split(/^\S/m)[0]!;
  return section
    .split('\n')
    .map((l) => /^ {2}(\S+(?: [a-z]+)?) {2,}/.exec(l)?.[1])
    .filter((n): n is string => n !== undefined && n !== 'help');
}

describe('pricehound --help, on every command', () => {
  after(() => {
    assert.deepEqual(fs.readdirSync(dir), []);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('walks every command and group the help lists: usage text, exit 0', async () => {
    const top = await cli(['--help'], env);
    assert.equal(top.code, 0);
    const commands = listedCommands(top.stdout);
    // Every command of the CLI, so a new one is walked too; these must be among them.
    for (const c of [
      'start',
      'serve',
      'worker',
      'migrate',
      'keys create',
      'keys list',
      'keys revoke',
      'prices rollup',
      'import products',
      'import listings',
      'export products',
      'export prices',
      'demo',
    ]) {
      assert.ok(commands.includes(c), `${c} is listed: ${commands.join(', ')}`);
    }
    const groups = [...new Set(commands.filter((c) => c.includes(' ')).map((c) => c.split(' ')[0]!))];
    const asks = [
      ...commands.map((c) => [...c.split(' '), '--help']),
      ...groups.map((g) => [g, '--help']),
      ...groups.map((g) => ['help', g]),
    ];
    const results = await Promise.all(asks.map((args) => cli(args, env)));
    results.forEach((r, i) => {
      const args = asks[i]!;
      const name = args.filter((a) => a !== '--help' && a !== 'help').join(' ');
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr, '', args.join(' '));
      assert.match(r.stdout, new RegExp(`^Usage: pricehound ${name}\\b`), args.join(' '));
      if (args.length === 2 && groups.includes(args[0]!)) {
        // A group's help lists its commands.
        for (const c of commands.filter((x) => x.startsWith(`${name} `)))
          assert.match(r.stdout, new RegExp(`^ {2}${c} `, 'm'));
      }
    });
  });

  it('answers unknown commands and options in every group with one line and exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['prices'], /^Usage: pricehound prices rollup/],
      [['prices', 'frob'], /^pricehound prices: unknown command "prices frob" \(see `pricehound prices --help`\)$/],
      [['import', 'competitors', 'x.csv'], /^pricehound import: unknown command "import competitors"/],
      [
        ['export', 'products', '--colour'],
        /^pricehound export products: Unknown option '--colour' \(see `pricehound export products --help`\)$/,
      ],
      [['import', 'products', 'a.csv', 'b.csv'], /^pricehound import products: unexpected argument "b.csv"/],
      [['demo', '--bogus'], /^pricehound demo: Unknown option '--bogus'/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(args, env)));
    results.forEach((r, i) => {
      const [args, expected] = cases[i]!;
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(lines(r.stderr)[0]!, expected, args.join(' '));
    });
  });
});
