// The fixture web site in a process of its own for bench/checks.ts, so that the CPU it uses is
// not counted as the worker's. Prints {"url": ...} on stdout once listening; stops on SIGTERM.
//   node --import tsx bench/checks-site.ts [gzip|br|identity]
import { startFixtureSite } from '../test/fixtures/site/server.js';

const encoding = process.argv[2] ?? 'gzip';
const site = await startFixtureSite({
  negotiateEncoding: encoding === 'identity' ? false : (encoding as 'gzip' | 'br'),
});
process.stdout.write(`${JSON.stringify({ url: site.url, pid: process.pid })}\n`);
process.once('SIGTERM', () => void site.close().then(() => process.exit(0)));
