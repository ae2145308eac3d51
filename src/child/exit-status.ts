// The exit status of a process ended by a signal, as a shell reports it: 128 + the signal's
// number (130 for SIGINT, 143 for SIGTERM). dlock exits with it when a signal ended its child or
// stopped its own wait (docs/reference/exit-codes.md).

import { constants } from 'node:os';

/** 128 + the number of `signal` (128 for a name this system does not know). */
export function signalStatus(signal: NodeJS.Signals | string): number {
  return 128 + (constants.signals[signal as NodeJS.Signals] ?? 0);
}
