// dlock heartbeat through the full CLI (e.g. `dlock -q heartbeat`): the same as src/entry.ts's fast path.

import type { Env } from '../config/index.js';
import { beat } from '../bounds/beat.js';
import { DlockError } from '../errors.js';

/** One heartbeat; a failure is thrown as the DlockError main.ts reports. */
export async function heartbeat(key: string | undefined, env: Env): Promise<number> {
  const { code, message } = beat(key, env);
  if (message) throw new DlockError(message, code);
  return code;
}
