// A node --test reporter for timed runs (scripts/run-tests.mjs with TEST_TIMINGS=dir): writes
// every finished test (file, name, nesting, duration, pass/fail) to dir/tests.jsonl.
import fs from 'node:fs';
import path from 'node:path';

export default async function* timings(source) {
  const out = path.join(process.env.TEST_TIMINGS ?? '.', 'tests.jsonl');
  // In a shared process (scripts/test-shared.mjs) each test file is a top-level suite named after it.
  const top = new Map();
  for await (const event of source) {
    if (event.type === 'test:start' && event.data.nesting === 0) top.set(event.data.file, event.data.name);
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const d = event.data;
    const line = {
      file: /\/shared-\d+\.test\.js$/.test(d.file ?? '') ? top.get(d.file) : d.file,
      name: d.name,
      nesting: d.nesting,
      ms: d.details?.duration_ms,
      ok: event.type === 'test:pass',
    };
    fs.appendFileSync(out, `${JSON.stringify(line)}\n`);
  }
  yield '';
}
