// The owner token every hold is taken with: a capability to release it, never shown.

import { closeSync, openSync, readSync } from 'node:fs';

/**
 * A fresh 128-bit owner token, hex. From /dev/urandom when there is one: node:crypto (16
 * internal modules) is a measurable part of a plain run's start-up and is not needed otherwise.
 */
export function newOwnerToken(): string {
  const bytes = Buffer.alloc(16);
  try {
    const fd = openSync('/dev/urandom', 'r');
    try {
      if (readSync(fd, bytes, 0, 16, null) === 16) return bytes.toString('hex');
    } finally {
      closeSync(fd);
    }
  } catch {
    // No /dev/urandom (Windows): the module then.
  }
  return process.getBuiltinModule('node:crypto').randomBytes(16).toString('hex');
}
