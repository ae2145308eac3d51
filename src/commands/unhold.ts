// dlock unhold <key> [--force]: end a hold (`dlock hold`). The holder is read, then released by its own owner
// token with the owner-checked release script, so a hold that ended meanwhile, or a holder that took the key
// since, is never removed. By the user who took it (the OS user name; the host may differ: CI runners do); by
// another only with --force, recorded in the history as `forced` (a steal) with who did it.

import { hostname } from 'node:os';
import type { UnholdConfig } from '../config/index.js';
import { UnavailableError, UsageError } from '../errors.js';
import { failureText, isClosed, openBackend, storeNow, unavailable, unreadable } from '../backend/index.js';
import { stdout, type Output } from '../output.js';
import { osUser } from '../user.js';
import { describeHolder } from '../views/holder-text.js';
import { holdText, whoOf } from '../views/hold-text.js';
import { printable } from '../untrusted.js';

export async function unhold({ config, key, force }: UnholdConfig, out: Output = stdout): Promise<number> {
  const backend = await openBackend(config);
  try {
    const read = await backend.lock(key).read();
    const failures = read.members.flatMap((v) => (v.failure ? [v.failure] : []));
    if (read.verdict === 'unknown' && failures.length > 0 && failures.every((f) => f.permanent && !f.reached))
      throw unreadable(key, failures);
    if (read.verdict === 'unknown') throw unavailable(backend.caps, failures);
    const holder = read.agreed?.holder;
    const nowMs = storeNow(read.clock);
    if (read.verdict !== 'held' || !holder || isClosed(holder) || read.state?.mode.kind !== 'exclusive') {
      if (holder && !isClosed(holder) && read.state && read.state.mode.kind !== 'exclusive')
        throw notAHold(key, `held by ${read.state.holders.length} --${read.state.mode.kind} holders`);
      out.write(`${key}: not held; nothing to unhold\n`);
      return 1;
    }
    if (!holder.hold) throw notAHold(key, describeHolder(holder, read.agreed?.ttlLeftMs, nowMs));
    const me = osUser();
    const mine = holder.user !== undefined && holder.user === me;
    if (!mine && !force) {
      throw new UsageError(
        `${key} is ${holdText(holder, nowMs)}: not your hold (you are ${printable(me) || 'an unknown user'}); ` +
          `dlock unhold --force ${key} ends it, recorded as taken by you`,
      );
    }
    const owned = backend.lock(key, { owner: holder.owner });
    const by = { user: me, host: hostname(), forced: !mine };
    const releases = await owned.release({ record: { exitStatus: '', oncePerMs: 0, by }, fence: holder.fence });
    const released = releases.some(({ outcome }) => outcome.kind === 'released');
    if (!released) {
      const failed = releases.flatMap(({ label, outcome }) =>
        outcome.kind === 'failed' ? [{ label, reason: outcome.reason }] : [],
      );
      if (failed.length > 0) throw new UnavailableError(`${key} not unheld: ${failed.map(failureText).join('; ')}`);
      out.write(`${key}: that hold ended meanwhile (it expired or was removed); nothing unheld\n`);
      return 1;
    }
    const whose = mine ? '' : ` (taken from ${whoOf(holder)} with --force)`;
    out.write(`${key}: unheld${whose}; it was ${holdText(holder, nowMs)}\n`);
    return 0;
  } finally {
    backend.close();
  }
}

/** 64: the key is held by a process (or by holders of --shared/--slots), not by a hold. */
function notAHold(key: string, who: string): UsageError {
  return new UsageError(
    `${key} is not held by a hold (${who}); unhold ends only what dlock hold took: to take it from its ` +
      `process, dlock release --force ${key}`,
  );
}
