// Which command lines that could not be parsed are a `dlock acquire` for eval, whose stdout must
// then carry the failure line (shell-idioms.test.ts runs it in real shells).

import { expect, test } from 'vitest';
import { acquireForEval, failureLine } from '../../src/keeper/fail-closed.js';

test.each([
  [['acquire', '--bogus', 'k'], true],
  [['-q', 'acquire', 'k'], true],
  [['--redis', 'redis://h', 'acquire', 'k'], true],
  [['acquire', '--prefix', 'run', 'k'], true],
  [['acquire', '--format', 'sh', 'k'], true],
  [['acquire', '--format', 'json', 'k'], false],
  [['acquire', '--format=json', 'k'], false],
  [['acquire', '--json', '--bogus', 'k'], false],
  [['run', 'k', '--', 'dlock', 'acquire', 'k'], false],
  [['run', '--bogus', 'acquire'], false],
  [['status', 'acquire'], false],
  [['help', 'acquire'], false],
  [['--', 'acquire'], false],
  [[], false],
])('%j is an acquire for eval: %s', (argv, expected) => {
  expect(acquireForEval(argv)).toBe(expected);
});

test('the failure line exits a script with the status, and fails a prompt with it from a subshell', () => {
  expect(failureLine(75)).toBe('case $- in *i*) (exit 75) ;; *) exit 75 ;; esac\n');
});
