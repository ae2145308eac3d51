// Which store a connection reaches, and how config builds one: every command's first step, so
// only the backends' light connection modules are imported here (their engines load in open.ts).

import {
  redisConnection,
  splitUrls,
  type RedisConnection,
  type RedisConnectionInput,
} from '../backends/redis/connection.js';

/** A configured store: its `store` names the backend that opens it; `caps` says what it can do. */
export type Connection = RedisConnection;

export type ConnectionInput = RedisConnectionInput;

/** The connection the URLs name (today every URL is a Redis one). */
export function connectionOf(input: ConnectionInput): Omit<Connection, 'connectTimeoutMs'> {
  return redisConnection(input);
}

/** The URLs of an environment variable that lists several. */
export const splitStoreUrls = splitUrls;
