// The binary pass is an explicit list (test/binary-pass.ts): every test file that starts dlock is
// either in it or said to be npm-only, with a reason, so a new file cannot silently skip the binary.

import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { BINARY_PASS, IDLE_LANE, NPM_ONLY, SECONDS } from '../binary-pass.js';

const TEST = fileURLToPath(new URL('..', import.meta.url));
const spawning = ['cli', 'topology', 'hostile', 'slow'].flatMap((folder) =>
  readdirSync(`${TEST}${folder}`)
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => `${folder}/${name.slice(0, -'.test.ts'.length)}`),
);

test('every test file that starts dlock is in the binary pass or npm-only, not both, with a reason', () => {
  const unlisted = spawning.filter((file) => !(file in BINARY_PASS) && !(file in NPM_ONLY));
  expect(unlisted, 'add each to BINARY_PASS or NPM_ONLY in test/binary-pass.ts').toEqual([]);
  expect(Object.keys(BINARY_PASS).filter((file) => file in NPM_ONLY)).toEqual([]);
  const reasons = { ...BINARY_PASS, ...NPM_ONLY };
  expect(Object.keys(reasons).filter((file) => !spawning.includes(file))).toEqual([]);
  expect(Object.entries(reasons).filter(([, reason]) => reason.trim().length < 10)).toEqual([]);
});

test('the durations the sequencer orders by name files that exist', () => {
  expect(Object.keys(SECONDS).filter((file) => !spawning.includes(file))).toEqual([]);
});

test('the idle lane (scripts/test-spawn.mjs) names files that exist', () => {
  expect(IDLE_LANE.filter((file) => !spawning.includes(file))).toEqual([]);
});
