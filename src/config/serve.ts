// dlock serve: the connection and the address the board listens on (127.0.0.1:9470 by default).

import { connectionConfig, type ConnectionConfig } from './connection.js';
import { listenAddress } from './metrics.js';
import { validateKey, type Env, type RawOptions } from './options.js';

/** The board's port when --listen names none: next to the metrics' 9464, unused by Prometheus' exporters. */
export const SERVE_PORT = 9470;

export interface ServeConfig {
  config: ConnectionConfig;
  /** Lock names the board shows even when free (their done mark, their history). */
  keys: string[];
  host: string;
  port: number;
}

/** dlock serve [key...]: --listen as metrics --listen reads it (a port alone: 127.0.0.1); by default 127.0.0.1:9470. */
export function serveConfig(keys: string[], raw: RawOptions, env: Env): ServeConfig {
  const config = connectionConfig(raw, env);
  const { host, port } = raw.listen === undefined ? { host: '127.0.0.1', port: SERVE_PORT } : listenAddress(raw.listen);
  return { config, keys: [...new Set(keys.map(validateKey))], host, port };
}
