import { loadConfigOrExit } from '../../config.js';
import { type Command, out } from '../command.js';
import { EXIT } from '../errors.js';

/** The database side (most of the application), loaded when the command runs, not for --help. */
const target = () => import('../target.js');

export const migrateCommand: Command = {
  name: 'migrate',
  positionals: [0, 0],
  options: { json: { type: 'boolean' } },
  help: `Usage: pricehound migrate [--json]

Applies the database migrations this version has and the database lacks, each exactly once
(concurrent runs wait for each other), and prints their names. Running it again changes
nothing. The server also applies them when it starts; this command is for deploy steps that
migrate first. Works while the server runs.

Options:
  --json            print {"applied": [names]}
  -h, --help        show this help
`,
  async run(values) {
    const ops = await (await target()).openOperations(loadConfigOrExit());
    let applied: string[];
    try {
      applied = await ops.migrate();
    } finally {
      await ops.close();
    }
    if (values.json) out(JSON.stringify({ applied }));
    else if (applied.length === 0) out('The database is up to date: no migrations to apply.');
    else out(applied.map((name) => `applied ${name}`).join('\n'));
    return EXIT.ok;
  },
};
