// --on-lost, decided once for `dlock run`'s command and an acquire's watched process
// (src/child/loss.ts), and the exit status of a signal (src/child/exit-status.ts).

import { expect, test } from 'vitest';
import { signalStatus } from '../../src/child/exit-status.js';
import { lossResponse, onLostSignal } from '../../src/child/loss.js';
import { now } from '../../src/clock.js';
import type { LossReason } from '../../src/hold/lease.js';

const reasons: Record<string, LossReason> = {
  refused: { kind: 'refused', deadline: now() + 60_000, message: 'renewal refused' },
  expiring: { kind: 'expiring', deadline: now() + 60_000, message: 'renewal failed' },
  'stalled past the deadline': { kind: 'expiring', deadline: now() - 1, message: 'renewal failed', lateMs: 500 },
};

test.each([
  ['term', 'refused', { signal: 'SIGTERM', stalled: false }],
  ['kill', 'refused', { signal: 'SIGKILL', stalled: false }],
  ['ignore', 'refused', { signal: undefined, stalled: false }],
  ['term', 'expiring', { signal: 'SIGTERM', stalled: false }],
  // The kill deadline passed while dlock stalled: no grace left.
  ['term', 'stalled past the deadline', { signal: 'SIGKILL', stalled: true }],
  ['kill', 'stalled past the deadline', { signal: 'SIGKILL', stalled: true }],
  ['ignore', 'stalled past the deadline', { signal: undefined, stalled: false }],
] as const)('--on-lost %s, %s: %o', (onLost, reason, response) => {
  expect(lossResponse(onLost, reasons[reason])).toEqual(response);
});

test('the signal --on-lost names', () => {
  expect([onLostSignal('term'), onLostSignal('kill'), onLostSignal('ignore')]).toEqual([
    'SIGTERM',
    'SIGKILL',
    undefined,
  ]);
});

test('128 + the signal number, as a shell reports it', () => {
  expect([signalStatus('SIGINT'), signalStatus('SIGTERM'), signalStatus('SIGKILL')]).toEqual([130, 143, 137]);
  expect(signalStatus('SIGNOTONE')).toBe(128);
});
