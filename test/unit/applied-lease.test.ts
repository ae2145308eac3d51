// A store may apply a longer lease than --ttl asked (etcd: whole seconds, at least its minimum), and
// the handle's ttlMs says so once it asked for it: what a hold reports of its lease (an attempt that
// could not be undone, a release that failed) counts from that lease, not from the config's.
// The handle here is made by hand: no lock behaviour is tested, only what the hold says of it.

import { expect, test } from 'vitest';
import { connectionConfig } from '../../src/config/index.js';
import { Logger } from '../../src/log.js';
import { Hold, type HoldConfig } from '../../src/hold/hold.js';
import type { LockHandle, MemberRelease, NotObtained, Obtained } from '../../src/backend/index.js';

const ASKED_MS = 500;
const APPLIED_MS = 2000;
const CONFIG: HoldConfig = {
  key: 'k',
  ttlMs: ASKED_MS,
  waitMs: 0,
  killAfterMs: 100,
  syncReplicas: 0,
  connectTimeoutMs: 1000,
  holderCmd: 'test',
  conflictExitCode: 75,
  verbosity: 'normal',
  logFormat: 'json',
  keyOptions: {},
};
const FAILURE = { label: 'm1:2379', reason: 'timed out', permanent: false, reached: false, errorReply: false };

/** A handle that answers `obtain` with `result` and fails every release, on a lease of APPLIED_MS. */
function handle(result: Obtained | NotObtained): LockHandle {
  const released: MemberRelease[] = [{ label: 'm1:2379', outcome: { kind: 'failed', reason: 'timed out' } }];
  return {
    key: 'k',
    owner: 'a'.repeat(32),
    ttlMs: APPLIED_MS,
    mode: { kind: 'exclusive' },
    caps: connectionConfig({}, {}).caps,
    obtain: async () => result,
    release: async () => released,
  } as Partial<LockHandle> as LockHandle;
}

function logged(): { log: Logger; events: () => Record<string, unknown>[] } {
  const lines: string[] = [];
  const log = new Logger('normal', 'json', { write: (text) => lines.push(text) });
  return { log, events: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

test('an attempt that could not be undone expires within the lease the store applied', async () => {
  const { log, events } = logged();
  const aborted: NotObtained = { kind: 'aborted', waitedMs: 0, unreleased: [FAILURE] };
  expect(await Hold.acquire(handle(aborted), CONFIG, log, new AbortController().signal)).toBeUndefined();
  const [event] = events();
  expect(event).toMatchObject({ event: 'release-failed', expires_in_ms: APPLIED_MS });
  expect(event.message).toMatch(/expires by itself within 2s\)$/);
});

test('an outage that left an attempt behind says it expires within the lease the store applied', async () => {
  const unavailable: NotObtained = { kind: 'unavailable', errors: [FAILURE], waitedMs: 0, unreleased: [FAILURE] };
  const { log } = logged();
  const held = Hold.acquire(handle(unavailable), CONFIG, log, new AbortController().signal);
  await expect(held).rejects.toThrow(/a lock it took there expires by itself within 2s\)$/);
});

test('a release that failed before renewal began expires within the lease the store applied', async () => {
  const { log, events } = logged();
  const acquired: Obtained = { kind: 'acquired', fence: '7', startedAt: 0, waitedMs: 0, failures: [] };
  const interrupted = new AbortController();
  interrupted.abort('SIGTERM');
  expect(await Hold.acquire(handle(acquired), CONFIG, log, interrupted.signal)).toBeUndefined();
  const failed = events().find((event) => event.event === 'release-failed');
  expect(failed?.expires_in_ms).toBeGreaterThan(ASKED_MS);
  expect(failed?.expires_in_ms).toBeLessThanOrEqual(APPLIED_MS);
});
