// Who runs this dlock: the OS user name, stored with a holder (status shows it) and compared by `dlock unhold`.

import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';

let known: string | undefined;

/**
 * The OS user name of this process's uid: its /etc/passwd entry, else (Node only) the system's lookup (NSS,
 * LDAP); for a uid with none (a container's `--user 1234`), "uid 1234". Never $USER, which anyone can set:
 * Bun's os.userInfo() answers with it, so the binary does not ask it.
 */
export function osUser(): string {
  if (known !== undefined) return known;
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  known = (uid === undefined ? undefined : passwdName(uid)) ?? systemName() ?? (uid === undefined ? '' : `uid ${uid}`);
  return known;
}

/** The name /etc/passwd gives `uid` (the first entry with it), undefined when none or unreadable. */
function passwdName(uid: number): string | undefined {
  let text: string;
  try {
    text = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const [name, , id] = line.split(':');
    if (name && id === String(uid)) return name;
  }
  return undefined;
}

/** Node's getpwuid lookup (sees NSS and LDAP users); not under Bun, whose answer is $USER. */
function systemName(): string | undefined {
  if (process.versions.bun !== undefined) return undefined;
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined;
  }
}
