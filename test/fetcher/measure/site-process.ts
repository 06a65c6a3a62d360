// The fixture site in its own process, for measure/fetch-cpu.ts. Prints its URL, then serves
// until SIGTERM. Argument: identity (default), gzip or br (compress /pages/* that way).
import { startFixtureSite } from '../../fixtures/site/server.js';

const mode = process.argv[2];
const site = await startFixtureSite({ negotiateEncoding: mode === 'gzip' || mode === 'br' ? mode : false });
process.stdout.write(`${site.url}\n`);
process.on('SIGTERM', () => void site.close().then(() => process.exit(0)));
