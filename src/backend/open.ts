// Opening a backend: the one place that chooses the engine by the connection's store. Each engine
// is imported when a command opens it, never before (a run loads one engine, nothing else).

import type { Backend, BackendModule, OpenOptions } from './backend.js';
import type { Connection } from './connection.js';

export async function backendModule(connection: Connection): Promise<BackendModule> {
  switch (connection.store) {
    case 'redis':
      return import('../backends/redis/index.js');
    case 'etcd':
      return import('../backends/etcd/index.js');
  }
}

export async function openBackend(connection: Connection, options: OpenOptions = {}): Promise<Backend> {
  return (await backendModule(connection)).open(connection, options);
}
