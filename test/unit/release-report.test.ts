// What a release says of the waiters it could not tell, worded from the store's capabilities: the
// Redis backend names the grant that cures it; a store whose release always reaches the waiters
// (notifyDenied undefined) names none.

import { expect, test } from 'vitest';
import { connectionConfig } from '../../src/config/index.js';
import { Logger } from '../../src/log.js';
import { logUnannounced } from '../../src/hold/release-report.js';
import type { MemberRelease } from '../../src/backend/index.js';

const UNANNOUNCED: MemberRelease[] = [{ label: 'm1:2379', outcome: { kind: 'released', notified: false } }];

function lines(notifyDenied: string | undefined): string[] {
  const written: string[] = [];
  const log = new Logger('normal', 'text', { write: (text) => written.push(text) });
  const caps = { ...connectionConfig({}, {}).caps, notifyDenied };
  logUnannounced(log, caps, UNANNOUNCED, 'k', '7');
  return written;
}

test('a release the waiters could not hear of names the grant the store needs', () => {
  expect(lines('PUBLISH denied: grant +publish')).toEqual([
    'dlock: released k, but m1:2379 refused to tell the waiters (PUBLISH denied: grant +publish); ' +
      'they notice by polling, within 5s\n',
  ]);
});

test('a store without a denied notification names no grant', () => {
  expect(lines(undefined)).toEqual([
    'dlock: released k, but m1:2379 could not tell the waiters; they notice by polling, within 5s\n',
  ]);
});
