// dlock status [key]: who holds a lock (exit 0 held, 1 free), or every held lock under the prefix.
// With several instances a lock is held only when one owner holds a majority of them; when the
// instances that did not answer could complete such a majority, status cannot tell (69).

import type { ConnectionConfig } from '../config/index.js';
import { UnavailableError } from '../errors.js';
import { type Backend, failureText, MODES, openBackend, storeNow, unavailable, unreadable } from '../backend/index.js';
import { stdout, type Output } from '../output.js';
import {
  describe,
  describeHolders,
  describeInstances,
  describeLine,
  keyJson,
  listJson,
  listText,
  unreadableSummary,
} from '../views/status-text.js';

export interface StatusOptions {
  json: boolean;
}

/** The report goes to `out` (stdout); errors and warnings are thrown or logged to stderr. */
export async function status(
  config: ConnectionConfig,
  key: string | undefined,
  options: StatusOptions,
  out: Output = stdout,
): Promise<number> {
  const backend = await openBackend(config);
  try {
    return key === undefined
      ? await listHeld(backend, config, options, out)
      : await showKey(backend, key, options, out);
  } finally {
    backend.close();
  }
}

async function showKey(backend: Backend, key: string, options: StatusOptions, out: Output): Promise<number> {
  const read = await backend.lock(key).read();
  const { verdict, agreed, state, members } = read;
  const { caps } = backend;
  // Several independent members: what each says is worth showing, and one failing is not the end.
  const quorum = caps.total > 1;
  const failures = members.flatMap((v) => (v.failure ? [v.failure] : []));
  // Refused for good (a grant missing): the words of run -n's error; a key of another type says so itself.
  if (verdict === 'unknown' && !quorum && failures.length > 0 && failures.every((f) => f.permanent && !f.reached))
    throw unreadable(key, failures);
  if (verdict === 'unknown' && !quorum) throw unavailable(caps, failures);
  if (options.json) {
    out.write(keyJson(key, read, caps));
  } else {
    // Ages count to the store's clock (the times were stamped on it), not this host's.
    const nowMs = storeNow(read.clock);
    if (state && MODES[state.mode.kind].manyHolders && state.holders.length > 0)
      out.write(describeHolders(key, state, nowMs));
    else out.write(agreed ? describe(key, agreed.holder!, agreed.ttlLeftMs ?? -1, nowMs) : `${key}: ${verdict}\n`);
    if (state && state.lineLength > 0) out.write(describeLine(state));
    if (quorum) out.write(describeInstances(read, caps));
  }
  if (verdict === 'unknown') {
    throw new UnavailableError(
      `cannot tell whether a majority holds ${key}: ${failures.length} of ${caps.total} instances did not answer ` +
        `(${failures.map(failureText).join('; ')})`,
    );
  }
  return verdict === 'held' ? 0 : 1;
}

/** Every lock under the prefix that a majority holds; one that could not be read is listed, then 69. */
async function listHeld(backend: Backend, config: ConnectionConfig, options: StatusOptions, out: Output) {
  const { keys, held, unreadable } = await backend.list();
  // A name the listing found can be anything (a forged hash): it is cut for showing, looked up whole.
  if (options.json) out.write(listJson(held, unreadable));
  else if (held.length === 0 && unreadable.length === 0) out.write(`no locks held under ${config.prefix}\n`);
  else out.write(listText(held, unreadable));
  if (unreadable.length > 0) {
    throw new UnavailableError(
      `could not read ${unreadable.length} of the ${keys.length} locks under ${config.prefix} ` +
        `(${unreadableSummary(unreadable)})`,
    );
  }
  return held.length > 0 ? 0 : 1;
}
