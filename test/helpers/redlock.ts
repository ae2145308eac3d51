// Helpers for the Redlock tests: --redis flags for a set of servers, JSON lock events on
// stderr, faults applied to one instance, and a seeded random for reproducible sequences.

import { events } from '../fixtures/observe.js';
import type { Running } from './cli.js';
import type { RedisServer } from '../../support/redis-server.mjs';

/** `--redis <url>` for every server, in order. */
export function redisFlags(servers: RedisServer[], url = (s: RedisServer) => s.url): string[] {
  return servers.flatMap((server) => ['--redis', url(server)]);
}

/** Resolve once `count` events named `event` have been printed in total; reject if dlock exits first. */
export function waitForEvents(running: Running, event: string, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (events(running.stderr(), event).length < count) return false;
      running.process.stderr!.off('data', onData);
      resolve();
      return true;
    };
    // The helper's own listener appends the chunk first; look after it has.
    const onData = () => setImmediate(check);
    running.process.stderr!.on('data', onData);
    if (check()) return;
    void running.result.then(() => {
      if (!check())
        reject(
          new Error(
            `dlock exited after ${events(running.stderr(), event).length} of ${count} "${event}" events; stderr:\n${running.stderr()}`,
          ),
        );
    });
  });
}

/** Resolve once `more` further `event` events have been printed than have been so far. */
export async function waitForMoreEvents(running: Running, event: string, more: number): Promise<void> {
  const seen = events(running.stderr(), event).length;
  await waitForEvents(running, event, seen + more);
}

export type Fault = 'stop' | 'pause';

/** Take an instance down the way it happens: killed (stop) or hung (SIGSTOP). */
export async function fail(server: RedisServer, fault: Fault): Promise<void> {
  if (fault === 'stop') await server.stop();
  else server.pause();
}

/** Undo any fault: resume a paused server, start a stopped one (same port and directory). */
export async function heal(servers: RedisServer[]): Promise<void> {
  await Promise.all(
    servers.map(async (server) => {
      server.resume();
      if (server.pid === undefined) await server.restart();
    }),
  );
}

/** A small seeded PRNG (mulberry32): the same seed gives the same sequence. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
