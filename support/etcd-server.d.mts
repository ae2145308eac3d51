import type { ChildProcess } from 'node:child_process';

/** SIGKILL every etcd member still running and remove its directory (also run at process exit). */
export function killAllEtcd(): void;

export interface EtcdctlResult {
  /** -1 when etcdctl could not start. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `etcdctl --endpoints <endpoints> …args` (ETCDCTL_API=3) run to its end. */
export function etcdctl(endpoints: string, ...args: string[]): Promise<EtcdctlResult>;
/** `etcdctl --endpoints <endpoints> …args` left running (a lock holder), stdout and stderr piped. */
export function spawnEtcdctl(endpoints: string, args: string[], options?: { env?: NodeJS.ProcessEnv }): ChildProcess;

export interface EtcdOptions {
  /** Extra etcd arguments, e.g. ['--election-timeout', '3000']. */
  args?: string[];
  /** Clients speak TLS (PEM paths); `clientAuth`: the member asks for a client certificate signed by `ca`. */
  tls?: { cert: string; key: string; ca: string; clientAuth?: boolean; clientCert?: string; clientKey?: string };
}

export class EtcdServer {
  constructor(name: string, clientPort: number, peerPort: number, initialCluster?: string, options?: EtcdOptions);
  /** A single-member cluster on free 127.0.0.1 ports, ready for requests. */
  static start<T extends EtcdServer>(
    this: new (name: string, clientPort: number, peerPort: number, initialCluster?: string, options?: EtcdOptions) => T,
    options?: EtcdOptions,
  ): Promise<T>;
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
  /** The client port (as RedisServer's). */
  readonly port: number;
  readonly initialCluster: string;
  args: string[];
  readonly dir: string;
  readonly logFile: string;
  readonly process: ChildProcess | undefined;
  /** Resolves when the current process has exited. */
  readonly exited: Promise<unknown>;
  readonly paused: boolean;
  /** `127.0.0.1:PORT` (etcdctl's --endpoints). */
  readonly endpoint: string;
  /** `etcd://127.0.0.1:PORT` (dlock's --redis). */
  readonly url: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  spawn(): void;
  ready(timeoutMs?: number): Promise<void>;
  launch(): Promise<void>;
  log(): string;
  /** One POST to the JSON gateway, e.g. request('/v3/maintenance/status'). */
  request(path: string, body?: unknown, timeoutMs?: number): Promise<any>;
  etcdctl(...args: string[]): Promise<EtcdctlResult>;
  spawnEtcdctl(args: string[], options?: { env?: NodeJS.ProcessEnv }): ChildProcess;
  /** SIGSTOP. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** SIGKILL, keeping the data directory; resolves once it is gone. */
  stop(): Promise<void>;
  /** stop, then start again on the same ports and data directory. */
  restart(): Promise<void>;
  /** stop and remove the directory. */
  close(): Promise<void>;
  /** close without waiting (exit paths). */
  kill(): void;
}

export class EtcdCluster {
  constructor(members: EtcdServer[]);
  readonly members: EtcdServer[];
  /** `127.0.0.1:A,127.0.0.1:B,…` */
  readonly endpoints: string;
  /** `etcd://127.0.0.1:A,127.0.0.1:B,…` */
  readonly url: string;
  /** The member that leads now (waits through an election). */
  leader(timeoutMs?: number): Promise<EtcdServer>;
  followers(): Promise<EtcdServer[]>;
  etcdctl(...args: string[]): Promise<EtcdctlResult>;
  spawnEtcdctl(args: string[], options?: { env?: NodeJS.ProcessEnv }): ChildProcess;
  close(): Promise<void>;
  kill(): void;
}

/** `count` members (default 3) under one --initial-cluster, started at once, each ready. */
export function startEtcdCluster(count?: number, options?: EtcdOptions): Promise<EtcdCluster>;
