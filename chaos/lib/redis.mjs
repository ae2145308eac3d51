// The chaos suite's redis-server processes: the shared support/redis-server.mjs, with every
// key kept (noeviction), and the wall time at which a SIGKILLed server was gone.

import { RedisServer } from '../../support/redis-server.mjs';
import { wallMs } from './procs.mjs';

export { freePort, killAllServers, RedisServer } from '../../support/redis-server.mjs';

/** A full server must refuse writes, never evict the lock or the fence counter. */
export const CHAOS_ARGS = ['--maxmemory-policy', 'noeviction'];

/** One server; `persistence` 'none' or 'aof-always' (the fence counter survives a SIGKILL). */
export function startServer(persistence = 'none', args = []) {
  return RedisServer.start({ persistence, args: [...CHAOS_ARGS, ...args] });
}

export function startServers(count, persistence) {
  return Promise.all(Array.from({ length: count }, () => startServer(persistence)));
}

/** SIGKILL `server`; resolves with the wall time it was gone. */
export async function killServer(server) {
  await server.stop();
  return wallMs();
}
