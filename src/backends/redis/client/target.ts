// A Redis target as dlock uses it once its URL is parsed (url.ts, multi-host-url.ts): how it is
// reached, what messages may show of it, and its credentials.

import type { TlsFiles } from '../../../tls-files.js';

export interface RedisNode {
  host: string;
  port: number;
}

/**
 * How a target is reached: one server (redis://, rediss://), the master a set of sentinels
 * names (redis+sentinel://), or a Cluster found from seed nodes (redis+cluster://).
 */
export type RedisKind = 'standalone' | 'sentinel' | 'cluster';

export interface RedisTarget {
  kind: RedisKind;
  /** What messages may show: the URL with any password replaced by "***". */
  label: string;
  /** The server; for sentinel and cluster the first of `nodes`. */
  host: string;
  port: number;
  /** The server, the sentinels, or the cluster's seed nodes, as listed in the URL. */
  nodes: RedisNode[];
  /** The name the sentinels know the master by (sentinel only). */
  masterName?: string;
  /** User and password of the data nodes (for sentinel: the master, not the sentinels). */
  username?: string;
  password?: string;
  /** The sentinels' own password (DLOCK_SENTINEL_PASSWORD), if they have one. */
  sentinelPassword?: string;
  db: number;
  tls: boolean;
  /** Extra trust and client certificate for a rediss:// target (verification is always on). */
  tlsFiles?: TlsFiles;
}
