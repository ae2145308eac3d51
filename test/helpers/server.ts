// One redis-server for the tests of a file, the way nearly every file wants it: started before
// they run, the dlocks a test left running killed after it (observe.ts spawnDlock/hold), and
// the server and the temporary directories gone at the end.

import { afterAll, afterEach, beforeAll } from 'vitest';
import { RedisServer } from '../../support/redis-server.mjs';
import { killLeftovers, removeTempDirs } from '../fixtures/observe.js';

/** Register the hooks; `started` receives the server before the file's first test. */
export function useRedisServer(
  started: (server: RedisServer) => void,
  options?: Parameters<typeof RedisServer.start>[0],
): void {
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await RedisServer.start(options);
    started(server);
  });
  afterEach(killLeftovers);
  afterAll(async () => {
    // close() also disconnects every client made with server.client().
    await server?.close();
    removeTempDirs();
  });
}
