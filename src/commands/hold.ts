// dlock hold <key> --reason <text>: a holder with no process (a deploy freeze), taken as any holder is
// (waiting in line with --wait), with a fixed lease (--for, --until) or none (until `dlock unhold`), and left
// there: no keeper renews it, nothing is printed for eval. One line on stdout says what it did.

import { hostname } from 'node:os';
import { signalStatus } from '../child/exit-status.js';
import { SignalRelay } from '../child/signal-relay.js';
import type { HoldCommandConfig } from '../config/index.js';
import { formatDuration } from '../duration.js';
import { Hold } from '../hold/hold.js';
import { Logger } from '../log.js';
import { stdout, type Output } from '../output.js';
import { type Backend, openBackend } from '../backend/index.js';
import { osUser } from '../user.js';
import { localTime, reasonPart } from '../views/hold-text.js';
import { printable } from '../untrusted.js';

export async function hold(config: HoldCommandConfig, out: Output = stdout): Promise<number> {
  const log = new Logger(config.verbosity, config.logFormat);
  const signals = new SignalRelay();
  let backend: Backend | undefined;
  try {
    backend = await openBackend(config, { ttlMs: config.ttlMs });
    const lock = backend.lock(config.key, { mode: { kind: 'exclusive' } });
    const shape = { forever: config.forever, ...(config.untilMs === undefined ? {} : { untilMs: config.untilMs }) };
    const held = await Hold.acquire(lock, { ...config, hold: shape }, log, signals.interrupted);
    if (!held) return signalStatus(signals.interrupted.reason as NodeJS.Signals);
    const takenAt = Date.now();
    await held.detach();
    const who = `${printable(osUser()) || 'unknown user'}@${printable(hostname())}`;
    const ends = config.forever
      ? 'until dlock unhold'
      : `until ${localTime(config.untilMs ?? takenAt + config.ttlMs)} (${formatDuration(
          (config.untilMs ?? takenAt + config.ttlMs) - takenAt,
        )})`;
    out.write(`${config.key}: held by ${who}${reasonPart(config.reason)} ${ends}, fence ${held.fence}\n`);
    return 0;
  } finally {
    signals.dispose();
    backend?.close();
  }
}
