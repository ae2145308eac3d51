// The holder metadata's `cmd`: the command line as `dlock status` shows it to anyone who can
// read the lock, so secrets are masked by where they stand, never by searching for them.

import { maskSecrets } from './secrets.js';
import { printable } from './untrusted.js';

/**
 * The `cmd` of a hold taken by `dlock acquire --no-keeper` (every dlock version writes it): the
 * lock is held across steps and no process holds it, so status never calls its pid dead.
 */
export const NO_KEEPER_CMD = 'dlock acquire --no-keeper';

/** Longest command line stored in the holder metadata. */
const MAX_CMD_METADATA = 256;

/**
 * `command` joined with its secrets masked: the password of every URL (`scheme://user:***@`),
 * an argument that is a known password, and the value of `--opt=<password>` or
 * `NAME=<password>`. A known password inside other text is left alone: replacing every
 * occurrence of a one-letter password would spell it out ("b***n***n***").
 */
export function holderCmd(command: string[], passwords: string[]): string {
  const known = new Set(passwords.filter((p) => p !== '').flatMap((p) => [p, encodeURIComponent(p)]));
  const words = command.map((word) => {
    if (known.has(word)) return '***';
    const eq = word.indexOf('=');
    if (eq > 0 && known.has(word.slice(eq + 1))) return `${word.slice(0, eq + 1)}***`;
    return maskSecrets(word);
  });
  // Control and format characters would reach the terminal of whoever runs `dlock status`
  // (which escapes them again, as any field of a hash that may be forged).
  const text = printable(words.join(' '));
  return Array.from(text).slice(0, MAX_CMD_METADATA).join('');
}
