// A throwaway single-member etcd on free loopback ports, for the `etcdctl lock` peer and dlock's
// etcd rows: the tests' own member (support/etcd-server.mjs), as the bench's Redis is theirs.

import { EtcdServer } from '../../support/etcd-server.mjs';

/** Resolves to { endpoint, stop } or { failed } (the reason) when etcd does not come up. */
export async function startEtcd() {
  try {
    const server = await EtcdServer.start();
    return { endpoint: server.endpoint, stop: () => server.kill() };
  } catch (error) {
    return { failed: error.message };
  }
}
