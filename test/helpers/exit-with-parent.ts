/**
 * Preloaded (`node --import`) into every pricehound process the tests spawn
 * (test/helpers/server-process.ts, which gives each an IPC channel for it): when the process that
 * spawned it is gone, so is this one. The channel's other end belongs to the spawning test process
 * alone; the kernel closes it when that process ends in any way (a normal exit, `--test-force-exit`,
 * a crash, SIGKILL), and node reports that as 'disconnect' here. Nothing the CLI does changes:
 * it neither sends nor reads on the channel, and the channel does not keep it alive.
 *
 * SIGKILL, not SIGTERM: nobody waits for a clean stop any more, and a server's data is the test's
 * throwaway DATA_DIR or database. Its connections close with it; a browser it started exits when
 * its pipe to the server closes.
 */
const channel = process.channel;
if (channel) {
  process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
  channel.unref();
}
