// lua/leave.lua through its handle: a waiter gives up its place, says why in the history, and the
// waiters that may now enter are woken.

import { expect, test } from 'vitest';
import { enterScript, leaveScript } from '../../src/backends/redis/lock/line.js';
import { entering, publishedOn, useScriptServer } from '../helpers/scripts.js';

const server = useScriptServer();

test('in line: its place, lease and details removed, "left" recorded with how long it waited', async () => {
  const keys = server.fresh();
  await server.run(enterScript, keys, entering('holder'));
  await server.run(enterScript, keys, entering('a'));
  await server.run(enterScript, keys, entering('b'));
  expect(await server.run(leaveScript, keys, { owner: 'a', record: 'left', waitedMs: 1500.6 })).toBe(true);
  expect(await server.redis().zrange(keys.line, 0, -1)).toEqual(['b']);
  expect(await server.redis().zscore(keys.lineExpiry, 'a')).toBeNull();
  expect(await server.redis().hexists(keys.lineInfo, 'a')).toBe(0);
  expect(await server.history(keys)).toContainEqual({
    event: 'left',
    host: 'host-a',
    pid: '4242',
    cmd: 'make deploy',
    waited_ms: '1501',
    why: 'wait',
  });
});

test('not in line: false, nothing recorded', async () => {
  const keys = server.fresh();
  expect(await server.run(leaveScript, keys, { owner: 'a', record: 'busy', waitedMs: 0 })).toBe(false);
  expect(await server.redis().exists(keys.history)).toBe(0);
});

test('the head leaves a free lock: the next waiter is woken', async () => {
  const keys = server.fresh();
  await server.run(enterScript, keys, entering('holder'));
  await server.run(enterScript, keys, entering('a'));
  await server.run(enterScript, keys, entering('b'));
  await server.redis().del(keys.lock);
  const woken = await publishedOn(server.redis(), `${keys.wakePrefix}b`, () =>
    server.run(leaveScript, keys, { owner: 'a', record: '', waitedMs: 0 }),
  );
  expect(woken).toBe('go');
  expect((await server.history(keys)).map((entry) => entry.event)).toEqual(['acquired']);
});
