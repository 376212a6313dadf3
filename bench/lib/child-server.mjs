import { fork } from 'node:child_process';
import { once } from 'node:events';

/**
 * A benchmark's server runs in a child process of its own, so that its capacity is set by its
 * timers and not by the CPU the clients use. In the child: listens on a free port of 127.0.0.1,
 * tells the parent the port, and exits when the parent goes.
 */
export function listenForParent(server) {
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('disconnect', () => process.exit(0));
}

/** In the parent: runs `scriptUrl` with `--serve` (and `args`) as a child process; resolves with it and its server's URL. */
export async function forkServer(scriptUrl, args = []) {
  const child = fork(new URL(scriptUrl).pathname, ['--serve', ...args], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const [{ port }] = await once(child, 'message');
  return { child, url: `http://127.0.0.1:${port}/` };
}
