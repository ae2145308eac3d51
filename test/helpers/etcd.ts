// etcd for the tests of a file, as helpers/server.ts does for Redis: one member (or a 3-member
// cluster) started before they run, the dlocks and `etcdctl lock`s a test left running killed after
// it, the members and the temporary directories gone at the end. Also `etcdctl lock` as a process
// to watch, and a look at a lock's line of keys through the JSON gateway.

import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { EtcdCluster, EtcdServer, startEtcdCluster, type EtcdOptions } from '../../support/etcd-server.mjs';
import { killLeftovers, removeTempDirs } from '../fixtures/observe.js';
import type { Result } from './cli.js';

/** Register the hooks; `started` receives the member before the file's first test. */
export function useEtcdServer(started: (server: EtcdServer) => void, options?: EtcdOptions): void {
  let server: EtcdServer | undefined;
  beforeAll(async () => {
    server = await EtcdServer.start(options);
    started(server);
  });
  afterEach(() => {
    server?.resume();
    killLeftovers();
    killEtcdctlLeftovers();
  });
  afterAll(async () => {
    await server?.close();
    removeTempDirs();
  });
}

/** The same for a cluster of `count` members (3 by default), started at once. */
export function useEtcdCluster(started: (cluster: EtcdCluster) => void, count = 3, options?: EtcdOptions): void {
  let cluster: EtcdCluster | undefined;
  beforeAll(async () => {
    cluster = await startEtcdCluster(count, options);
    started(cluster);
  });
  afterEach(() => {
    for (const member of cluster?.members ?? []) member.resume();
    killLeftovers();
    killEtcdctlLeftovers();
  });
  afterAll(async () => {
    await cluster?.close();
    removeTempDirs();
  });
}

/** An etcdctl left running (`etcdctl lock NAME -- command`), watched like helpers/cli.ts's Running. */
export interface Etcdctl {
  process: ChildProcess;
  stdout(): string;
  stderr(): string;
  result: Promise<Result>;
  /** true until it has exited. */
  running(): boolean;
}

const etcdctls = new Set<Etcdctl>();

/** `etcdctl --endpoints <endpoints> …args` (ETCDCTL_API=3, no ETCDCTL_* of the caller), left running. */
export function startEtcdctl(endpoints: string, args: string[]): Etcdctl {
  const env: NodeJS.ProcessEnv = { ETCDCTL_API: '3' };
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('ETCDCTL_')) env[name] = value;
  const child = spawn('etcdctl', ['--endpoints', endpoints, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let exited = false;
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const result = new Promise<Result>((resolve) =>
    child.on('close', (code, signal) => {
      exited = true;
      resolve({ code, signal, stdout, stderr });
    }),
  );
  const started: Etcdctl = {
    process: child,
    stdout: () => stdout,
    stderr: () => stderr,
    result,
    running: () => !exited,
  };
  etcdctls.add(started);
  void result.then(() => etcdctls.delete(started));
  return started;
}

/** `etcdctl lock NAME -- command…` (etcdctl 3.4's lease TTL: 10 s unless `ttl`). */
export function etcdctlLock(endpoints: string, name: string, command: string[], ttl?: number): Etcdctl {
  return startEtcdctl(endpoints, [
    'lock',
    ...(ttl === undefined ? [] : ['--ttl', String(ttl)]),
    name,
    '--',
    ...command,
  ]);
}

/** SIGKILL every etcdctl a test started and left running (its command dies with it or runs out). */
export function killEtcdctlLeftovers(): void {
  for (const started of etcdctls) started.process.kill('SIGKILL');
  etcdctls.clear();
}

/** Resolves with its result if it exits within `ms`, else with undefined (it is still running then). */
export function exitWithin(started: { result: Promise<Result> }, ms: number): Promise<Result | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([started.result, timeout]).finally(() => clearTimeout(timer));
}

const b64 = (text: string) => Buffer.from(text).toString('base64');
/** The range_end that makes `prefix` a prefix range (its last byte plus one). */
const prefixEnd = (prefix: string) => {
  const bytes = Buffer.from(prefix);
  bytes[bytes.length - 1]++;
  return bytes.toString('base64');
};

/** One key of a lock's line (etcd's mutex layout: `<lock>/<lease hex>`). */
export interface LineKey {
  key: string;
  /** The lease id in lowercase hex (as etcdctl writes it in the key). */
  lease: string;
  createRevision: bigint;
}

/**
 * The keys under `lock + '/'` (etcdctl's lock name, or dlock's prefix and escaped name), oldest
 * first: the first one holds, the others wait in that order.
 */
export async function lineOf(server: EtcdServer, lock: string): Promise<LineKey[]> {
  const prefix = `${lock}/`;
  const reply = await server.request('/v3/kv/range', {
    key: b64(prefix),
    range_end: prefixEnd(prefix),
    sort_target: 'CREATE',
    sort_order: 'ASCEND',
  });
  const kvs = (reply.kvs ?? []) as { key: string; create_revision: string; lease?: string }[];
  return kvs.map((kv) => ({
    key: Buffer.from(kv.key, 'base64').toString(),
    lease: BigInt(kv.lease ?? '0').toString(16),
    createRevision: BigInt(kv.create_revision),
  }));
}

/** The lease ids (lowercase hex) etcd has now, as `etcdctl lease list` prints them. */
export async function leases(server: EtcdServer): Promise<string[]> {
  const reply = await server.request('/v3/lease/leases', {});
  return ((reply.leases ?? []) as { ID: string }[]).map((lease) => BigInt(lease.ID).toString(16));
}
