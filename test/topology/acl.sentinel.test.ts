// Through Sentinel the dlock user also needs +ping and +info (dlock checks it talks to a
// master): without +info the answer is 69 "permission denied" at once, never a hang or a retry.

import { afterAll, beforeAll, expect, test } from 'vitest';
import { dlock } from '../helpers/cli.js';
import { expectOneError } from '../helpers/hostile.js';
import { ConnectClock } from '../helpers/connect-clock.js';
import { SentinelTopology } from '../helpers/topology.js';

const GRANTS = [
  '~dlock:*',
  '&dlock:*',
  '+evalsha',
  '+eval',
  '+scan',
  '+subscribe',
  '+hget',
  '+hset',
  '+hgetall',
  '+exists',
  '+pttl',
  '+pexpire',
  '+incr',
  '+get',
  '+set',
  '+del',
  '+publish',
  '+wait',
  '+select',
  '+ping',
];

let topology: SentinelTopology;

beforeAll(async () => {
  topology = await SentinelTopology.start();
  const admin = topology.data.primary.client();
  await admin.call('ACL', 'SETUSER', 'dlock', 'reset', 'on', '>pw', ...GRANTS);
}, 30_000);

afterAll(() => topology?.close());

test('no +info under Sentinel: 69 "permission denied" at once, nothing left', async () => {
  // The sentinel reached through a forwarder that notes when dlock connected, after its start-up.
  const clock = await ConnectClock.start(topology.sentinels[0].port);
  const url = topology.url({ sentinels: [clock.port] }).replace('redis+sentinel://', 'redis+sentinel://dlock:pw@');
  const result = await dlock(['run', '-n', '--connect-timeout', '3s', '--redis', url, 'acl-noinfo', '--', 'true']);
  const endedAt = Date.now();
  await clock.close();
  expectOneError(result, 69, /permission denied by the server's ACL: .*'info'/);
  // From the connection on (dlock's start-up, up to ~1.5s on a loaded machine, left out).
  expect(endedAt - clock.firstMs).toBeLessThan(3_000);
  const admin = topology.data.primary.client();
  expect(await admin.exists('dlock:{acl-noinfo}')).toBe(0);
  expect(await admin.get('dlock:{acl-noinfo}:fence')).toBe(null);
});
