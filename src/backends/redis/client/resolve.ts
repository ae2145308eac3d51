// Host names to all their addresses, bounded in time. node:dns loads only when a name is
// looked up (never for IP literals, never for one instance): start-up time matters.

import { isIP } from 'node:net';
import { withTimeout } from '../../../clock.js';

/** Each distinct host: its addresses (IP literals as they are), or why it could not be resolved. */
export async function resolveHosts(hosts: string[], timeoutMs: number): Promise<Map<string, string[] | Error>> {
  const names = [...new Set(hosts)];
  const resolved = await Promise.all(
    names.map(async (host): Promise<string[] | Error> => {
      if (isIP(host)) return [host];
      try {
        const { lookup } = process.getBuiltinModule('node:dns').promises;
        const found = await withTimeout(lookup(host, { all: true }), timeoutMs);
        return found.map(({ address }) => address);
      } catch (error) {
        return error as Error;
      }
    }),
  );
  return new Map(names.map((host, i) => [host, resolved[i]]));
}
