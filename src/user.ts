// Who runs this dlock: the OS user name, stored with a holder (status shows it) and compared by `dlock unhold`.

import { userInfo } from 'node:os';

let known: string | undefined;

/** The OS user name (the passwd entry of this process's uid; else $USER or $LOGNAME); "" when none can be told. */
export function osUser(env: Record<string, string | undefined> = process.env): string {
  if (known !== undefined) return known;
  try {
    known = userInfo().username;
  } catch {
    // A uid without a passwd entry (a container's): the environment's word, else nothing.
    known = env.USER || env.LOGNAME || '';
  }
  return known;
}
