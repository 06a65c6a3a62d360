// A node --test reporter for timed runs (scripts/run-tests.mjs with TEST_TIMINGS=dir): writes
// every finished test (file, name, nesting, duration, pass/fail) to dir/tests.jsonl.
import fs from 'node:fs';
import path from 'node:path';

export default async function* timings(source) {
  const out = path.join(process.env.TEST_TIMINGS ?? '.', 'tests.jsonl');
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const d = event.data;
    const line = {
      file: d.file,
      name: d.name,
      nesting: d.nesting,
      ms: d.details?.duration_ms,
      ok: event.type === 'test:pass',
    };
    fs.appendFileSync(out, `${JSON.stringify(line)}\n`);
  }
  yield '';
}
