import type { KeyView } from '../../owner-channel/operations.js';
import { describePlans, isPlan, PLAN_NAMES } from '../../auth/plans.js';
import { isScope, SCOPES } from '../../auth/scopes.js';
import { type Command, note, out } from '../command.js';
import { CliError, EXIT, UsageError } from '../errors.js';

/** The database side (most of the application), loaded when the command runs, not for --help. */
const target = () => import('../target.js');

const PLAN_LIST = PLAN_NAMES.join('|');

/** Control characters in names would garble a terminal. */
const printable = (s: string | null) => (s === null ? '-' : s.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?'));

function table(keys: KeyView[]): string {
  const header = ['ID', 'ACCOUNT', 'PLAN', 'SCOPE', 'NAME', 'PREFIX', 'CREATED', 'REVOKED'];
  const rows = keys.map((k) => [
    k.id,
    k.account_id,
    k.plan,
    k.scope,
    printable(k.name),
    k.key_prefix,
    k.created_at,
    k.revoked_at ?? '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows]
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '))
    .join('\n');
}

function optionalText(values: Record<string, unknown>, name: string, command: string): string | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const s = String(v).trim();
  if (s === '' || s.length > 200) throw new UsageError(`--${name} must be 1 to 200 characters`, command);
  return s;
}

export const keysCreate: Command = {
  name: 'keys create',
  positionals: [0, 0],
  options: {
    plan: { type: 'string' },
    scope: { type: 'string' },
    name: { type: 'string' },
    account: { type: 'string' },
    json: { type: 'boolean' },
  },
  help: `Usage: pricehound keys create --plan ${PLAN_LIST} [--scope full|read] [--name NAME] [--account ACCOUNT_ID] [--json]

Creates an API key and prints it once: only its hash is stored, it cannot be shown again.
Without --account the key gets a new account of its own; with --account it is added to that
existing account (to rotate a key: create the new one with --account, then revoke the old).

Options:
  --plan PLAN       the key's hourly request limit: ${describePlans()}; required
  --scope SCOPE     full (default): everything the API allows; read: GET requests only (a
                    dashboard on a wall, a reporting tool)
  --name NAME       a label for the key (and for the new account, when one is made)
  --account ID      add the key to this existing account (acct_...)
  --json            print one JSON object: key, id, plan, scope, account_id, name, key_prefix,
                    created_at
  -h, --help        show this help

Output: the key alone on stdout, so KEY=$(pricehound keys create --plan free) works; the
details go to stderr. Works whether or not the server is running.
Exit status: 0 created, 1 unknown account or other failure, 2 wrong usage or configuration.
`,
  async run(values) {
    const plan = values.plan;
    if (plan === undefined) throw new UsageError(`--plan is required (${PLAN_LIST})`, this.name);
    if (!isPlan(plan)) throw new UsageError(`unknown plan "${String(plan)}": use ${PLAN_LIST}`, this.name);
    const scope = values.scope ?? 'full';
    if (!isScope(scope)) throw new UsageError(`unknown scope "${String(scope)}": use ${SCOPES.join('|')}`, this.name);
    const name = optionalText(values, 'name', this.name);
    const accountId = optionalText(values, 'account', this.name);
    const k = await (
      await target()
    ).withOperations((ops) => ops.createKey({ plan, scope, name: name ?? null, accountId: accountId ?? null }));
    if (values.json) {
      const { key, id, plan: p, scope: s, account_id, name: n, key_prefix, created_at } = k;
      out(JSON.stringify({ key, id, plan: p, scope: s, account_id, name: n, key_prefix, created_at }));
    } else {
      out(k.key);
      note(
        `Created API key ${k.id} (plan ${k.plan}, scope ${k.scope}) for ${accountId ? 'account' : 'new account'} ${k.account_id}.`,
      );
      note('Store it now: it is not shown again.');
    }
    return EXIT.ok;
  },
};

export const keysList: Command = {
  name: 'keys list',
  positionals: [0, 0],
  options: { account: { type: 'string' }, json: { type: 'boolean' } },
  help: `Usage: pricehound keys list [--account ACCOUNT_ID] [--json]

Lists API keys, oldest first: id, account, plan, name, key prefix, created and revoked times.
Keys and their hashes are never shown.

Options:
  --account ID      only the keys of this account
  --json            print a JSON array of {id, account_id, plan, name, key_prefix, created_at, revoked_at}
  -h, --help        show this help
`,
  async run(values) {
    const accountId = optionalText(values, 'account', this.name);
    const keys = await (await target()).withOperations((ops) => ops.listKeys(accountId));
    if (values.json) out(JSON.stringify(keys));
    else if (keys.length === 0)
      note(
        accountId
          ? `No API keys for account ${accountId}.`
          : 'No API keys yet: create one with `pricehound keys create --plan free`.',
      );
    else out(table(keys));
    return EXIT.ok;
  },
};

export const keysRevoke: Command = {
  name: 'keys revoke',
  positionals: [1, 1],
  argName: 'ID (the key id, key_..., as shown by `pricehound keys list`)',
  options: { json: { type: 'boolean' } },
  help: `Usage: pricehound keys revoke ID [--json]

Revokes the API key with this id (key_..., see \`pricehound keys list\`). Every server process
refuses it from its next request on. Revoking a revoked key changes nothing.

Options:
  --json            print the revoked key as a JSON object (as in keys list --json)
  -h, --help        show this help

Exit status: 0 revoked, 1 no such key or other failure, 2 wrong usage or configuration.
`,
  async run(values, [id]) {
    const k = await (await target()).withOperations((ops) => ops.revokeKey(id!));
    if (!k) throw new CliError(`no API key ${id}: see \`pricehound keys list\``);
    if (values.json) out(JSON.stringify(k));
    else out(`Revoked ${k.id} (account ${k.account_id}) at ${k.revoked_at}.`);
    return EXIT.ok;
  },
};
