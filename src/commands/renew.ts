// dlock renew <key>: extend a held lease by its TTL, by the owner token alone (steps on
// different machines, `acquire --no-keeper`).

import type { ConnectionConfig } from '../config/index.js';
import { Logger } from '../log.js';
import { renewAsOwner } from '../hold/by-token.js';

export async function renew(config: ConnectionConfig, key: string, token: string): Promise<number> {
  return renewAsOwner(config, key, token, new Logger(config.verbosity, config.logFormat));
}
