// The same Redis server given twice would count twice toward a Redlock majority: the pure
// check as a table (no server), then the CLI refusing it (64) before connecting to anything.

import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { findDuplicate, hostForm, type ResolvedTarget } from '../../src/backends/redis/duplicates.js';
import { dlock } from '../helpers/cli.js';
import { freePort } from '../../support/redis-server.mjs';

const one = (label: string, addresses: string[], port = 6379): ResolvedTarget => ({
  label,
  kind: 'standalone',
  nodes: [{ addresses, port }],
});

describe('findDuplicate', () => {
  test.each<[string, ResolvedTarget[], string | undefined]>([
    ['distinct ports', [one('a', ['127.0.0.1'], 6379), one('b', ['127.0.0.1'], 6380)], undefined],
    ['distinct addresses', [one('a', ['10.0.0.1']), one('b', ['10.0.0.2'])], undefined],
    ['same address and port', [one('a', ['127.0.0.1']), one('b', ['127.0.0.1'])], '127.0.0.1:6379'],
    [
      'a name resolving to an address used by another',
      [one('a', ['127.0.0.1']), one('b', ['::1', '127.0.0.1'])],
      '127.0.0.1:6379',
    ],
    [
      'only the third repeats one',
      [one('a', ['10.0.0.1']), one('b', ['10.0.0.2']), one('c', ['10.0.0.1'])],
      '10.0.0.1:6379',
    ],
    ['IPv4-mapped IPv6 is the IPv4 address', [one('a', ['::ffff:10.0.0.1']), one('b', ['10.0.0.1'])], '10.0.0.1:6379'],
    [
      'host names compare without case or trailing dot',
      [one('a', ['Redis.Example']), one('b', ['redis.example.'])],
      'redis.example:6379',
    ],
    ['IPv6 in brackets or not', [one('a', ['[::1]']), one('b', ['::1'])], '[::1]:6379'],
    [
      'one target listing an address twice is not a duplicate',
      [one('a', ['127.0.0.1', '127.0.0.1']), one('b', ['::1'])],
      undefined,
    ],
    [
      'a cluster seed node is the same server as a plain URL',
      [
        one('a', ['10.0.0.1'], 7000),
        {
          label: 'c',
          kind: 'cluster',
          nodes: [
            { addresses: ['10.0.0.2'], port: 7000 },
            { addresses: ['10.0.0.1'], port: 7000 },
          ],
        },
      ],
      '10.0.0.1:7000',
    ],
    [
      'the same master through a shared sentinel',
      [
        { label: 's1', kind: 'sentinel', masterName: 'm', nodes: [{ addresses: ['10.0.0.1'], port: 26379 }] },
        {
          label: 's2',
          kind: 'sentinel',
          masterName: 'm',
          nodes: [
            { addresses: ['10.0.0.9'], port: 26379 },
            { addresses: ['10.0.0.1'], port: 26379 },
          ],
        },
      ],
      'master m of sentinel 10.0.0.1:26379',
    ],
    [
      'other masters of the same sentinels are other servers',
      [
        { label: 's1', kind: 'sentinel', masterName: 'm1', nodes: [{ addresses: ['10.0.0.1'], port: 26379 }] },
        { label: 's2', kind: 'sentinel', masterName: 'm2', nodes: [{ addresses: ['10.0.0.1'], port: 26379 }] },
      ],
      undefined,
    ],
  ])('%s', (_, targets, server) => {
    expect(findDuplicate(targets)?.server).toBe(server);
  });

  test('names the first target and the one that repeats it', () => {
    expect(findDuplicate([one('a', ['1.1.1.1']), one('b', ['2.2.2.2']), one('c', ['2.2.2.2'])])).toEqual({
      first: 'b',
      second: 'c',
      server: '2.2.2.2:6379',
    });
  });

  test.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::FFFF:127.0.0.1', '127.0.0.1'],
    ['[::1]', '[::1]'],
    ['fe80::1', '[fe80::1]'],
    ['Host.Example.', 'host.example'],
  ])('hostForm(%s) = %s', (address, form) => {
    expect(hostForm(address)).toBe(form);
  });
});

describe('dlock refuses a server given twice (64), before connecting to anything', () => {
  // Not a Redis: a listener that counts connections, so "nothing connects" is observed.
  let listener: Server;
  let port: number;
  let connections = 0;
  beforeAll(async () => {
    port = await freePort();
    listener = createServer((socket) => (connections++, socket.destroy()));
    await new Promise<void>((resolve) => listener.listen(port, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  test.each([
    [
      '127.0.0.1 and localhost',
      (p: number) => [`redis://127.0.0.1:${p}`, `redis://localhost:${p}`, `redis://127.0.0.1:${p + 1}`],
    ],
    [
      'the same URL with another db',
      (p: number) => [`redis://127.0.0.1:${p}/0`, `redis://127.0.0.1:${p + 1}`, `redis://127.0.0.1:${p}/3`],
    ],
    [
      'the default port written and left out',
      () => ['redis://127.0.0.1:6379', 'redis://127.0.0.1', 'redis://127.0.0.1:1'],
    ],
  ])('%s', async (_, urls) => {
    const list = urls(port);
    for (const command of [
      ['run', ...list.flatMap((url) => ['--redis', url]), 'dup', '--', 'true'],
      ['status', ...list.flatMap((url) => ['--redis', url]), 'dup'],
    ]) {
      const result = await dlock(command);
      expect(result.code, result.stderr).toBe(64);
      expect(result.stderr).toMatch(
        /^dlock: redis:\/\/\S+ and redis:\/\/\S+ are the same Redis server \(\S+\): it would count twice toward the Redlock majority; give each server once\n$/,
      );
    }
    expect(connections).toBe(0);
  });

  test('the message names both URLs as given, passwords masked', async () => {
    const result = await dlock([
      'run',
      '--redis',
      `redis://:pw@127.0.0.1:${port}`,
      '--redis',
      `redis://:pw@localhost:${port}/2`,
      '--redis',
      `redis://127.0.0.1:${port + 1}`,
      'dup',
      '--',
      'true',
    ]);
    expect(result.code).toBe(64);
    expect(result.stderr).toBe(
      `dlock: redis://:***@127.0.0.1:${port} and redis://:***@localhost:${port}/2 are the same Redis server (127.0.0.1:${port}): it would count twice toward the Redlock majority; give each server once\n`,
    );
    expect(connections).toBe(0);
  });

  test('an unresolvable host is an unreachable instance (69), not a usage error', async () => {
    const result = await dlock([
      'run',
      '--connect-timeout',
      '2s',
      '--redis',
      `redis://127.0.0.1:${port}`,
      '--redis',
      'redis://no-such-host.invalid:6379',
      'dup',
      '--',
      'true',
    ]);
    expect(result.code, result.stderr).toBe(69);
    expect(result.stderr).toContain('redis://no-such-host.invalid:6379: host not found');
  });
});
