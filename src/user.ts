// Who runs this dlock: the OS user name, stored with a holder (status shows it) and compared by `dlock unhold`.

import { userInfo } from 'node:os';

let known: string | undefined;

/**
 * The OS user name (the passwd entry of this process's uid); for a uid without one (a container's `--user
 * 1234`), "uid 1234": the same uid unholds its own hold, and $USER, which anyone can set, is never trusted.
 */
export function osUser(): string {
  if (known !== undefined) return known;
  try {
    known = userInfo().username;
  } catch {
    known = typeof process.getuid === 'function' ? `uid ${process.getuid()}` : '';
  }
  return known;
}
