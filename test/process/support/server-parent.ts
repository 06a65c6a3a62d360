/**
 * A stand-in for a test process that has started a server (test/process/orphans.test.ts): starts
 * one through test/helpers/server-process.ts with the environment in ORPHAN_SERVER_ENV (JSON),
 * prints {"pid", "url"} of it as one line, and stays alive (the server's pipes hold it) until
 * the test kills it.
 */
import { spawnServer } from '../../helpers/server-process.js';

const server = await spawnServer(JSON.parse(process.env.ORPHAN_SERVER_ENV ?? '{}') as Record<string, string>);
process.stdout.write(`${JSON.stringify({ pid: server.proc.pid, url: server.url })}\n`);
