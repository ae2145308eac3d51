// One renewal across the lock set: success only with a quorum, within validity. In Redlock
// mode, an instance that lost the key while a quorum still holds it for us is re-taken (retake.ts).

import { extendScript } from './lock/extend.js';
import { extendHolderScript } from './lock/line.js';
import { MODES } from '../../backend/mode.js';
import type { HeldLock } from './lock/retake.js';
import { failureText } from './client/client.js';
import { now } from '../../clock.js';
import type { RenewOptions as HandleRenewOptions, Renewal } from '../../backend/backend.js';
import { fanOut, notWith, type LockSet } from './lockset.js';
import { tally } from './quorum.js';
import { strategyOf } from './strategy.js';
import { renewTimeoutMs, validityMs } from '../../timing.js';

export interface RenewOptions extends HandleRenewOptions {
  /** Redlock: what a re-taken instance gets (the held token, the holder's metadata). */
  held?: HeldLock;
}

export async function extendAll(set: LockSet, { givesUpAt, held, progress }: RenewOptions): Promise<Renewal> {
  const startedAt = now();
  // Sized from the time left, not from the TTL: a slow link still renews. Once a quorum renewed,
  // a hung instance gets only the acquire's per-instance timeout more (small next to the TTL).
  const timeoutMs = renewTimeoutMs(set.connectTimeoutMs, givesUpAt - startedAt);
  // A holder of --slots/--shared has its own lease inside the lock's hash; an exclusive one, the hash's.
  const script = MODES[set.mode.kind].manyHolders ? extendHolderScript : extendScript;
  // One instance keeps a history: a refused renewal of a hold is recorded there as its loss.
  const record =
    held && set.caps.history
      ? { host: held.meta.host, pid: held.meta.pid, cmd: held.meta.cmd, fence: held.fence }
      : undefined;
  const round = await fanOut(
    set,
    (i) => script.run(i.client, set.keys, { owner: set.owner, ttlMs: set.ttlMs, record, progress }, timeoutMs),
    (ok) => ok,
    set.timeoutMs,
  );
  const verdict = tally(round.outcomes, set.total);
  if (verdict === 'won' && validityMs(set.ttlMs, startedAt, now()) > 0) {
    const retaken = held ? await strategyOf(set).afterRenew(set, round.outcomes, startedAt, held) : [];
    const failures = notWith(set, round, 'the lock is gone there (expired, deleted, or lost in a restart)').filter(
      ({ label }) => !retaken.includes(label),
    );
    return { kind: 'extended', startedAt, failures, retaken };
  }
  if (verdict === 'refused') return { kind: 'refused' };
  return {
    kind: 'failed',
    errors: round.failures.length ? round.failures.map(failureText) : ['no quorum renewed in time'],
  };
}
