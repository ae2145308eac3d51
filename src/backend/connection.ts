// Which store a connection reaches, and how config builds one: every command's first step, so
// only the backends' light connection modules are imported here (their engines load in open.ts).

import type { Connection, ConnectionInput, StoreName } from './backend.js';
import { UsageError } from '../errors.js';
import { redactUrl } from '../secrets.js';
import { redisConnection, splitUrls } from '../backends/redis/connection.js';
import { etcdConnection, isEtcdUrl } from '../backends/etcd/connection.js';

export type { Connection, ConnectionInput } from './backend.js';

/** The connection the URLs name: the backend is chosen by the URLs' scheme, one store per command. */
export function connectionOf(input: ConnectionInput): Omit<Connection, 'connectTimeoutMs'> {
  const store = storeOf(input.urls[0] ?? '');
  const other = input.urls.find((url) => storeOf(url) !== store);
  if (other !== undefined) {
    throw new UsageError(
      `${input.option}: ${redactUrl((input.urls[0] ?? '').trim())} and ${redactUrl(other.trim())} ` +
        `name two stores (${store}, ${storeOf(other)}): give the URLs of one`,
    );
  }
  switch (store) {
    case 'redis':
      return redisConnection(input);
    case 'etcd':
      return etcdConnection(input);
  }
}

/** The backend a URL's scheme names: Redis takes every scheme no other backend claims (its parser words the error). */
function storeOf(url: string): StoreName {
  return isEtcdUrl(url) ? 'etcd' : 'redis';
}

/** The URLs of an environment variable that lists several. */
export const splitStoreUrls = splitUrls;
