import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { cli, lines } from './helpers/cli.js';

// None of these gets as far as opening a database; DATA_DIR points at a directory that must stay empty.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-cli-usage-'));
const env = { DATA_DIR: dir, DATABASE_URL: '', REDIS_URL: '' };

describe('pricehound usage and help', () => {
  after(() => {
    assert.deepEqual(fs.readdirSync(dir), []);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints help for the program and for each command, exit 0', async () => {
    const [top, create, helpCreate, start, version] = await Promise.all([
      cli(['--help'], env),
      cli(['keys', 'create', '--help'], env),
      cli(['help', 'keys', 'create'], env),
      cli(['start', '-h'], env),
      cli(['--version'], env),
    ]);
    for (const r of [top, create, helpCreate, start, version]) {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
    }
    for (const name of ['start', 'serve', 'migrate', 'keys create', 'keys list', 'keys revoke'])
      assert.match(top.stdout, new RegExp(`^  ${name} `, 'm'));
    assert.match(
      create.stdout,
      /^Usage: pricehound keys create --plan free\|starter\|business \[--scope full\|read\] \[--name NAME\] \[--account ACCOUNT_ID\] \[--json\]$/m,
    );
    assert.equal(helpCreate.stdout, create.stdout);
    assert.match(
      create.stdout,
      /^ {2}--plan PLAN .*\bfree 1000, starter 10000, business 100000\b/m,
      'each plan with its hourly limit',
    );
    assert.match(start.stdout, /SHUTDOWN_TIMEOUT_MS/);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  });

  it('answers wrong usage with one line and exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /^pricehound: unknown command "frobnicate" \(see `pricehound --help`\)$/],
      [['keys', 'rotate'], /^pricehound keys: unknown command "keys rotate"/],
      [
        ['keys', 'create', '--plan', 'free', '--colour'],
        /^pricehound keys create: Unknown option '--colour' \(see `pricehound keys create --help`\)$/,
      ],
      [
        ['keys', 'create', '--plan', 'free', '--name', ''],
        /^pricehound keys create: --name must be 1 to 200 characters/,
      ],
      [['keys', 'revoke'], /^pricehound keys revoke: missing ID/],
      [['keys', 'revoke', 'key_a', 'key_b'], /^pricehound keys revoke: unexpected argument "key_b"/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(args, env)));
    results.forEach((r, i) => {
      const [args, expected] = cases[i]!;
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(lines(r.stderr)[0]!, expected);
      assert.equal(lines(r.stderr).length, 1, r.stderr);
    });
  });

  it('validates the configuration once, naming the variable (exit 2)', async () => {
    const r = await cli(['keys', 'list'], { ...env, PORT: 'abc' });
    assert.equal(r.code, 2);
    assert.deepEqual(lines(r.stderr), ['pricehound: invalid configuration: PORT: must be a whole number, got "abc"']);
  });
});
