// One contender for the lock in its own process, using a peer library at its default settings,
// logging the same json events as `dlock run --log-format json` so the bench measures both alike:
//   node bench/peers/contender.mjs <redlock|redis-semaphore> <redis-url> <key> <hold-ms|gate>
// "gate" holds until a line arrives on stdin (the bench's first holder); a number holds that long.
// Events: ready (connected, about to acquire), acquired (acquire() resolved), released (release() resolved).

import { Redis } from 'ioredis';
import { epochMs } from '../lib/clock.mjs';

const [library, url, key, hold] = process.argv.slice(2);

/** Lock length for redlock, which has no default: long enough that the bench's gated first holder (no auto-extension) keeps it while 50 waiters start on a busy machine. */
const REDLOCK_MS = 120_000;

function event(name) {
  const ts = epochMs();
  process.stderr.write(`${JSON.stringify({ ts_ms: Math.round(ts * 1000) / 1000, event: name, key })}\n`);
}

function held() {
  if (hold !== 'gate') return new Promise((resolve) => setTimeout(resolve, Number(hold)));
  return new Promise((resolve) => {
    process.stdin.once('data', resolve);
    process.stdin.once('end', resolve);
  });
}

/** acquire() resolving to a release function, at the library's defaults. Only that library is loaded. */
async function locker(client) {
  if (library === 'redlock') {
    const { default: Redlock } = await import('redlock');
    // Defaults (retryDelay 200 ms, retryJitter 100 ms, driftFactor 0.01) except acquire's
    // retryCount: the default 10 retries (~2 s) would make most of 50 queued waiters give up.
    const redlock = new Redlock([client]);
    return async () => {
      const lock = await redlock.acquire([key], REDLOCK_MS, { retryCount: -1 });
      return () => lock.release();
    };
  }
  if (library === 'redis-semaphore') {
    // Defaults (lockTimeout 10 s, retryInterval 10 ms, refresh every 8 s) except acquireTimeout:
    // the default 10 s, counted from the process start, is too short for 50 queued waiters.
    const { Mutex } = await import('redis-semaphore');
    const mutex = new Mutex(client, key, { acquireTimeout: 10 * 60_000 });
    return async () => {
      await mutex.acquire();
      return () => mutex.release();
    };
  }
  throw new Error(`unknown library ${library}`);
}

const client = new Redis(url);
client.on('error', () => {});
await new Promise(
  (resolve, reject) => (client.once('ready', resolve), client.once('end', () => reject(new Error('cannot connect')))),
);
const acquire = await locker(client);
event('ready');
const release = await acquire();
event('acquired');
await held();
await release();
event('released');
client.disconnect();
process.exit(0);
