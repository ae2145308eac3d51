import type { ChildProcess } from 'node:child_process';
import type { Redis } from 'ioredis';

export function freePort(): Promise<number>;
export function canConnect(port: number): Promise<boolean>;
export function waitForPort(port: number, what: string, timeoutMs?: number): Promise<true>;

export type Persistence = 'none' | 'aof-always';
export const PERSISTENCE: Record<Persistence, string[]>;

/** SIGKILL every server still running and remove its directory. */
export function killAllServers(): void;

export interface RedisOptions {
  /** Extra redis-server arguments, e.g. ['--replicaof', '127.0.0.1', '6379']. */
  args?: string[];
  /** 'none' (default) or 'aof-always': every acknowledged write fsync'd. */
  persistence?: Persistence;
}

export class RedisServer {
  constructor(port: number, options?: RedisOptions);
  static start<T extends RedisServer>(
    this: new (port: number, options?: RedisOptions) => T,
    options?: RedisOptions,
  ): Promise<T>;
  readonly port: number;
  readonly dir: string;
  args: string[];
  readonly persistence: Persistence;
  readonly process: ChildProcess | undefined;
  /** Resolves when the current process has exited. */
  readonly exited: Promise<unknown>;
  readonly paused: boolean;
  readonly url: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  launch(): Promise<void>;
  client(): Redis;
  command(...args: (string | number)[]): Promise<unknown>;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
  kill(): void;
}

export function startServers(count: number, options?: RedisOptions): Promise<RedisServer[]>;
