import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { COMMANDS } from '../../src/cli/commands/index.js';

/** The specifiers of a source file's value imports (`import type` left out: erased when compiled). */
function valueImports(file: URL): string[] {
  const source = fs.readFileSync(file, 'utf8');
  return [...source.matchAll(/^import (?!type )[^;]*? from '([^']+)';/gms)].map((m) => m[1]!);
}

describe('the CLI command table (src/cli/commands/index.ts)', () => {
  it('names each command as its module does, each once', async () => {
    assert.equal(new Set(COMMANDS.map((c) => c.name)).size, COMMANDS.length);
    for (const entry of COMMANDS) assert.equal((await entry.load()).name, entry.name);
  });

  it('is all a CLI process loads before it knows its command: no command module, no application code', () => {
    // Every module main.ts loads up front, and what they load. A command's module (the typed
    // client, the auth tables, the demo catalogue, ...) is imported by its entry's load() alone.
    const src = new URL('../../src/cli/', import.meta.url);
    const upFront = new Map<string, string[]>();
    const walk = (file: string) => {
      if (upFront.has(file)) return;
      const found = valueImports(new URL(file.replace(/\.js$/, '.ts'), src));
      upFront.set(file, found);
      for (const f of found) if (f.startsWith('./')) walk(new URL(f, new URL(file, src)).href.slice(src.href.length));
    };
    walk('main.js');
    assert.deepEqual([...upFront.keys()].sort(), ['command.js', 'commands/index.js', 'errors.js', 'main.js']);
    const outside = [...upFront.values()].flat().filter((f) => !f.startsWith('./') && !f.startsWith('node:'));
    assert.deepEqual(outside, [], 'main.ts and the modules it loads up front import nothing else');
  });
});
