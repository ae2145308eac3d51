// What `dlock release` leaves on this host for the shell whose section it ended: a mark named by a
// hash of the key and the owner token, in the runtime directory (../runtime-dir.ts). The shell's
// environment still names the lock afterwards (DLOCK_KEY, DLOCK_TOKEN, DLOCK_HELD: a child cannot change its
// parent's environment), so a later `dlock run` or `acquire` of that key, or a second release,
// finds a token that holds nothing. The mark tells "its owner ended the section" (take the key
// afresh; a second release has nothing left to do) from "the lock expired or was taken under
// it" (the section is broken: 76, nothing runs).

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Env } from '../config/index.js';
import { LockLostError } from '../errors.js';
import { runtimeDir } from '../runtime-dir.js';

/** How the owner's release ended the section: released it, or found it no longer held (76). */
export type Ending = 'released' | 'not-held';

/** Marks older than this are removed when a new one is written: no shell keeps a stale lock that long. */
const KEEP_MS = 7 * 24 * 3600_000;
const PREFIX = 'ended-';

/** Named by the key and the token: a mistaken release of another key says nothing about this one. */
function markFile(dir: string, key: string, token: string): string {
  const hash = createHash('sha256').update(`${key}\0${token}`).digest('hex');
  return join(dir, `${PREFIX}${hash.slice(0, 32)}`);
}

/** Note that `token`'s owner ended its section (best effort: without a runtime directory, nothing). */
export function markEnded(key: string, token: string, ending: Ending, env: Env = process.env): void {
  const dir = runtimeDir(env);
  if (!dir) return;
  try {
    writeFileSync(markFile(dir, key, token), `${ending}\n`, { mode: 0o600 });
    pruneMarks(dir);
  } catch {
    // A later nested run then says the lock is gone (76) and how to take it afresh.
  }
}

/** How `token`'s owner ended its section on this host; undefined when it did not (or nothing says). */
export function endedMark(key: string, token: string, env: Env = process.env): Ending | undefined {
  const dir = runtimeDir(env);
  if (!dir) return undefined;
  try {
    const text = readFileSync(markFile(dir, key, token), 'latin1').trim();
    return text === 'released' || text === 'not-held' ? text : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A nested `run` or `acquire` whose environment names a lock on `key` that `token` no longer
 * holds: fine when its owner ended that section here (the key is taken afresh); else the lock
 * expired or was taken under the enclosing job (a --no-keeper lease that ran out, a forced
 * release), and taking it anew would split the job between two holders: 76, nothing runs.
 */
export function refuseIfTakenAway(key: string, token: string, command: 'run' | 'acquire'): void {
  if (endedMark(key, token) !== undefined) return;
  throw new LockLostError(
    `${key}: the lock an enclosing dlock held (DLOCK_TOKEN or DLOCK_HELD) is no longer held: it expired or was ` +
      `taken, and a nested ${command} does not take it anew; nothing ran (to take ${key} as a new holder: ` +
      `env -u DLOCK_KEY -u DLOCK_HELD dlock ${command} …)`,
    { event: 'not-ours', fields: { key } },
  );
}

function pruneMarks(dir: string): void {
  const before = Date.now() - KEEP_MS;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(PREFIX)) continue;
    const file = join(dir, name);
    try {
      if (statSync(file).mtimeMs < before) rmSync(file, { force: true });
    } catch {
      // Gone meanwhile.
    }
  }
}
