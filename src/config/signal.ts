// --signal (run, acquire): the signal that stops the job for --on-lost term, --max-hold and
// --heartbeat, as timeout(1)'s -s chooses it; SIGKILL still follows after --kill-after.

import { badOption } from '../errors.js';

export const STOP_SIGNAL_DEFAULT: NodeJS.Signals = 'SIGTERM';

/**
 * The signal `text` names: TERM, SIGTERM (any case) or its number (15), one of the standard signals
 * Node and Bun name (not the real-time ones, 34 and up: neither runtime sends them by name); no
 * spaces. SIGTERM when not given. Anything else is a usage error (64). node:os only when it is given.
 */
export function stopSignal(text: string | undefined): NodeJS.Signals {
  if (text === undefined) return STOP_SIGNAL_DEFAULT;
  const signals = process.getBuiltinModule('node:os').constants.signals as Record<string, number>;
  const upper = text.toUpperCase();
  const name = /^\s|\s$/.test(text)
    ? undefined
    : /^\d{1,2}$/.test(upper)
      ? Object.keys(signals).find((candidate) => signals[candidate] === Number(upper))
      : upper.startsWith('SIG')
        ? upper
        : `SIG${upper}`;
  if (name === undefined || !(name in signals) || signals[name] === 0) {
    throw badOption(
      '--signal',
      text,
      'not a signal name or number (TERM, SIGINT, 1: a standard signal, not a real-time one; no spaces)',
    );
  }
  return name as NodeJS.Signals;
}
