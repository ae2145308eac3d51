// Each script declares the commands its Lua calls (define-script.ts `commands`): doctor's ACL
// check asks about exactly those, so a redis.call the declaration lacks would go unchecked.

import { readdirSync, readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { ALL_SCRIPTS } from '../../src/backends/redis/lock/all-scripts.js';

/** Every command a Lua text calls, as written: redis.call('X', …) or redis.pcall("X", …). */
function calledIn(lua: string): string[] {
  const calls = [...lua.matchAll(/redis\.p?call\(/g)].length;
  const named = [...lua.matchAll(/redis\.p?call\(\s*(['"])([^'"]*)\1/g)].map((match) => match[2]);
  // A command that is not a literal (a variable) cannot be checked against the declaration.
  expect(named, 'every redis.call names its command as a literal').toHaveLength(calls);
  return named;
}

test.each(ALL_SCRIPTS.map((script) => [script.name, script] as const))(
  '%s declares every command its Lua calls, and no other',
  (_name, script) => {
    const called = new Set(calledIn(script.lua).map((command) => command.toUpperCase()));
    expect([...script.commands].sort()).toEqual([...called].sort());
  },
);

test('no command is declared twice in a script', () => {
  for (const script of ALL_SCRIPTS) expect(new Set(script.commands).size, script.name).toBe(script.commands.length);
});

test('every script in src/backends/redis/lock/lua/ is sent by one handle (the shared files by several)', () => {
  const files = readdirSync(new URL('../../src/backends/redis/lock/lua/', import.meta.url)).filter((name) =>
    name.endsWith('.lua'),
  );
  const shared = ['common.lua', 'line-lib.lua', 'totals.lua'];
  expect(files.filter((name) => !shared.includes(name)).sort()).toEqual(
    ALL_SCRIPTS.map((script) => `${script.name}.lua`).sort(),
  );
  for (const name of files) {
    const text = readFileSync(new URL(`../../src/backends/redis/lock/lua/${name}`, import.meta.url), 'utf8');
    expect(text.startsWith('-- '), `${name} opens with its header comment`).toBe(true);
    expect(
      text.split('\n').filter((line) => line.length > 120),
      `${name}: lines over 120 characters`,
    ).toEqual([]);
  }
});

// Issue 31: the ACL page tied +zcard and +hexists to the line and --slots/--shared only, while
// every release (Redlock's too) checks its keys with them. Its table names each script's grants.
test('docs/operations/tls-and-acl.md lists, for each script, exactly the grants its commands need', () => {
  const page = readFileSync(new URL('../../docs/operations/tls-and-acl.md', import.meta.url), 'utf8');
  const rows = new Map(
    [...page.matchAll(/^ *\| [^|]+ \| `([\w-]+)\.lua` \| ([^|]+) \|$/gm)].map((row) => [row[1], row[2].trim()]),
  );
  for (const script of ALL_SCRIPTS) {
    const listed = rows.get(script.name)?.split(/\s+/).sort();
    const needed = script.commands.map((command) => `\`+${command.toLowerCase()}\``).sort();
    expect(listed, `${script.name}.lua's row`).toEqual(needed);
  }
  expect([...rows.keys()].sort()).toEqual(ALL_SCRIPTS.map((script) => script.name).sort());
});
