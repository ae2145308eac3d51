// The store's own variables for a holder (Obtained.env: etcd's ETCD_LOCK_KEY and ETCD_LOCK_REV) in
// the section's variables: after dlock's in acquire's export lines, as "env" in its JSON, in run's
// command environment (spawned on the grant, or by the shell made ready while waiting), and never
// in place of a DLOCK_* variable.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { enclosedEnv, formatVariables, holdVariables } from '../../src/hold/variables.js';
import { prepareChild } from '../../src/child/launcher.js';

const T = 'a'.repeat(32);
const LOCK = { key: 'k', token: T, ttlMs: 2000 };
const STORE = { ETCD_LOCK_KEY: "dlock:k/694d'7", ETCD_LOCK_REV: '12', DLOCK_KEY: 'forged', 'A-B': 'x' };

test("acquire prints the store's variables after dlock's, and never one named DLOCK_*", () => {
  const variables = holdVariables(LOCK, { fence: '12', store: STORE });
  expect(formatVariables(variables, 'sh')).toBe(
    [
      "export DLOCK_KEY='k'",
      `export DLOCK_TOKEN='${T}'`,
      "export DLOCK_FENCING_TOKEN='12'",
      "export DLOCK_TTL_MS='2000'",
      "export ETCD_LOCK_KEY='dlock:k/694d'\\''7'",
      "export ETCD_LOCK_REV='12'",
      '',
    ].join('\n'),
  );
  expect(JSON.parse(formatVariables(variables, 'json'))).toEqual({
    key: 'k',
    token: T,
    fence: '12',
    ttl_ms: 2000,
    env: { ETCD_LOCK_KEY: "dlock:k/694d'7", ETCD_LOCK_REV: '12' },
  });
});

test('a store without variables changes nothing', () => {
  const variables = holdVariables(LOCK, { fence: '12', store: {} });
  expect(variables).not.toHaveProperty('store');
  expect(JSON.parse(formatVariables(variables, 'json'))).not.toHaveProperty('env');
});

test("the command's environment: the store's replace the caller's of the same name, never dlock's", () => {
  const caller = { PATH: '/bin', DLOCK_KEY: 'outer', DLOCK_TOKEN: 'b'.repeat(32), ETCD_LOCK_KEY: 'outer/1' };
  const env = enclosedEnv(caller, holdVariables(LOCK, { fence: '12', store: STORE }));
  expect(env).toMatchObject({ DLOCK_KEY: 'k', DLOCK_TOKEN: T, ETCD_LOCK_KEY: "dlock:k/694d'7", ETCD_LOCK_REV: '12' });
  expect(env).not.toHaveProperty('store');
  expect(env).not.toHaveProperty('A-B');
  // Without the store's, the caller's stay: they name the lock an enclosing section holds.
  expect(enclosedEnv(caller, holdVariables(LOCK, { fence: '12' }))).toMatchObject({ ETCD_LOCK_KEY: 'outer/1' });
});

const dir = mkdtempSync(join(tmpdir(), 'dlock-store-vars-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the command made ready while waiting gets the store's variables with the grant", async () => {
  const out = join(dir, 'env');
  const env = { PATH: process.env.PATH, ETCD_LOCK_KEY: 'outer/1', OUT: out };
  const prepared = prepareChild('/bin/sh', ['-c', 'env > "$OUT"'], env);
  if (!prepared) return; // no dash here: the command is spawned on the grant, with the environment above
  const child = prepared.start('12', undefined, { ETCD_LOCK_KEY: "dlock:k/6 9'4d", ETCD_LOCK_REV: '12' });
  expect(await child!.exited).toBe(0);
  const lines = readFileSync(out, 'utf8').split('\n');
  expect(lines).toContain("ETCD_LOCK_KEY=dlock:k/6 9'4d");
  expect(lines).toContain('ETCD_LOCK_REV=12');
  expect(lines).toContain('DLOCK_FENCING_TOKEN=12');
  expect(lines.filter((line) => line.startsWith('DLOCK_LAUNCH_'))).toEqual([]);
});

test('a store variable the waiting shell cannot take leaves the command to be spawned on the grant', () => {
  const prepared = prepareChild('/bin/true', [], { PATH: process.env.PATH });
  if (!prepared) return;
  expect(prepared.start('12', undefined, { ETCD_LOCK_KEY: 'a\nb' })).toBeUndefined();
});
