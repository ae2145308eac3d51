// Which store a connection reaches, and how config builds one: every command's first step, so
// only the backends' light connection modules are imported here (their engines load in open.ts).

import type { Connection, ConnectionInput, StoreName } from './backend.js';
import { redisConnection, splitUrls } from '../backends/redis/connection.js';

export type { Connection, ConnectionInput } from './backend.js';

/** The connection the URLs name: the backend is chosen by the first URL's scheme. */
export function connectionOf(input: ConnectionInput): Omit<Connection, 'connectTimeoutMs'> {
  switch (storeOf(input.urls[0] ?? '')) {
    case 'redis':
      return redisConnection(input);
  }
}

/** The backend a URL's scheme names: Redis takes every scheme no other backend claims (its parser words the error). */
function storeOf(_url: string): StoreName {
  return 'redis';
}

/** The URLs of an environment variable that lists several. */
export const splitStoreUrls = splitUrls;
