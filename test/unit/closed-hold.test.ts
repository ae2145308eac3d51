// A hold is closed by release --force (its forcedMs), not by having no dlock owner: a store's
// own holder (etcdctl lock's key, which carries no details) holds the lock (docs: status --json).

import { describe, expect, test } from 'vitest';
import type { Capabilities, Holder, LockRead } from '../../src/backend/index.js';
import { keyJson } from '../../src/views/status-text.js';

const caps = { quorum: 1, members: { noun: 'endpoints', field: 'store' } } as Capabilities;
const base: Holder = { kind: 'exclusive', owner: '', fence: '5', host: '', pid: '', cmd: '', forcedMs: 0 };

function statusOf(holder: Holder) {
  const view = { label: 'store://127.0.0.1', held: true, holder, ttlLeftMs: 9000 };
  const read: LockRead = { verdict: 'held', agreed: view, members: [view] };
  return JSON.parse(keyJson('k', read, caps));
}

describe('a closed hold is one release --force closed', () => {
  test('a holder with no dlock owner and no forcedMs (a foreign holder) holds the lock', () => {
    const json = statusOf(base);
    expect(json.held).toBe(true);
    expect(json.closed).toBeUndefined();
    expect(json.holder.closed).toBeUndefined();
    expect(json.instances[0]).toMatchObject({ store: 'store://127.0.0.1', held: true });
  });

  test('a hold release --force closed (forcedMs) is held by nobody, and closed', () => {
    const json = statusOf({ ...base, forcedMs: 1_700_000_000_000 });
    expect(json).toMatchObject({ held: false, closed: true, holder: { closed: true } });
    expect(json.instances[0]).toMatchObject({ held: false, closed: true });
  });
});
