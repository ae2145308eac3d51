// The script names dlock sends with EVALSHA: its own SHA-1 (src/lock/sha1.ts, which keeps
// node:crypto out of a plain run) must be byte for byte node:crypto's, or every EVALSHA would
// miss and fall back to EVAL.

import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { sha1Hex } from '../src/lock/sha1.js';
import * as scripts from '../src/lock/scripts.js';

const reference = (text: string) => createHash('sha1').update(text).digest('hex');

test.each(['', 'abc', 'a'.repeat(55), 'a'.repeat(56), 'a'.repeat(63), 'a'.repeat(64), 'a'.repeat(65), 'é€😀 lua', 'x'.repeat(100_000)])('%#: the same as node:crypto', (text) => {
  expect(sha1Hex(text)).toBe(reference(text));
});

test('every script dlock runs', () => {
  const lua: string[] = Object.values(scripts).filter((value) => typeof value === 'string');
  expect(lua.length).toBeGreaterThan(0);
  for (const text of lua) expect(sha1Hex(text)).toBe(reference(text));
});

test('any text', () => {
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => sha1Hex(text) === reference(text)), { numRuns: 500 });
});
