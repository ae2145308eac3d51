// doctor's ACL check asks about every command the lock scripts declare (lock/all-scripts.ts), so
// a command a script starts calling is checked without editing the doctor.

import { expect, test } from 'vitest';
import { grantChecks } from '../../src/backends/redis/doctor/grants.js';
import { scriptCommands } from '../../src/backends/redis/lock/all-scripts.js';

/** A server on which the user may run nothing: every command asked about comes back as missing. */
const refusingAll = {
  eval: async (_script: string, _keys: number, ...argv: string[]) => {
    const flags: number[] = [];
    for (let i = 0; i < argv.length; i += Number(argv[i]) + 1) flags.push(0);
    return flags;
  },
};

test.each([false, true])('with redlock %s, every declared command is asked about once or more', async (redlock) => {
  const checks = await grantChecks(refusingAll as never, { prefix: 'dlock:', db: 0, redlock }, 'u');
  const asked = new Set(checks.map((check) => check.name.replace(/^acl \+/, '')));
  for (const command of scriptCommands()) {
    // SET is asked about for Redlock's fence and, on one instance, for --once-per's mark.
    expect(asked, command).toContain(command.toLowerCase());
  }
});
