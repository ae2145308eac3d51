// One Redis server given twice would count twice toward a Redlock majority: find two targets
// that reach the same server, by the addresses their hosts resolve to (pure; see open.ts).

import type { RedisKind } from './client/target.js';

/** A target as the duplicate check sees it: where each of its nodes listens. */
export interface ResolvedTarget {
  label: string;
  kind: RedisKind;
  /** Sentinel only: the sentinels serve data of this master, not their own. */
  masterName?: string;
  /** Each node: the addresses its host resolved to (or the host as written), and its port. */
  nodes: { addresses: string[]; port: number }[];
}

export interface Duplicate {
  first: string;
  second: string;
  /** What both reach, e.g. "127.0.0.1:6379". */
  server: string;
}

/** The first pair of targets that share a server, or undefined. The db number does not matter: one process. */
export function findDuplicate(targets: ResolvedTarget[]): Duplicate | undefined {
  const seen = new Map<string, string>();
  for (const target of targets) {
    const mine = new Set(endpoints(target));
    for (const endpoint of mine) {
      const first = seen.get(endpoint);
      if (first !== undefined) return { first, second: target.label, server: endpoint };
    }
    for (const endpoint of mine) seen.set(endpoint, target.label);
  }
  return undefined;
}

/** A server or cluster node is "address:port"; a sentinel-managed master is its name at a sentinel. */
function endpoints(target: ResolvedTarget): string[] {
  return target.nodes.flatMap(({ addresses, port }) =>
    addresses.map((address) => {
      const where = `${hostForm(address)}:${port}`;
      return target.kind === 'sentinel' ? `master ${target.masterName} of sentinel ${where}` : where;
    }),
  );
}

/** One spelling per address: lower case, no trailing dot, IPv4-mapped IPv6 as IPv4, IPv6 in brackets. */
export function hostForm(address: string): string {
  const plain = address
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
  return plain.includes(':') ? `[${plain}]` : plain;
}
