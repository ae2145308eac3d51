// dlock metrics: the keys to report besides the held ones, and where the text goes (stdout,
// a textfile for node_exporter, a Pushgateway, or a scrape endpoint).

import { isIP } from 'node:net';
import { badOption, UsageError } from '../errors.js';
import { redactUrl } from '../secrets.js';
import { connectionConfig, type ConnectionConfig } from './connection.js';
import { validateKey, type Env, type RawOptions } from './options.js';

/** Where the metrics go: once to stdout, once to a file or a Pushgateway, or served until a signal. */
export type MetricsOutput =
  | { kind: 'stdout' }
  | { kind: 'textfile'; path: string }
  | { kind: 'push'; url: string }
  | { kind: 'listen'; host: string; port: number };

/** dlock metrics: the connection, the named keys, and the output. */
export interface MetricsConfig {
  config: ConnectionConfig;
  keys: string[];
  /** --only: the named keys alone, not every held lock under the prefix. */
  only: boolean;
  output: MetricsOutput;
}

/** dlock metrics [key...]: each key checked as every key is; at most one of --textfile, --push, --listen. */
export function metricsConfig(keys: string[], raw: RawOptions, env: Env): MetricsConfig {
  const config = connectionConfig(raw, env);
  const given = (['textfile', 'push', 'listen'] as const).filter((name) => raw[name] !== undefined);
  if (given.length > 1) throw new UsageError(`${given.map((name) => `--${name}`).join(' and ')}: choose one`);
  const output = metricsOutput(raw);
  const named = [...new Set(keys.map(validateKey))];
  if (raw.only && named.length === 0)
    throw new UsageError('--only: name the keys to report (dlock metrics --only KEY...)');
  return { config, keys: named, only: raw.only === true, output };
}

function metricsOutput(raw: RawOptions): MetricsOutput {
  if (raw.textfile !== undefined) {
    if (raw.textfile === '' || raw.textfile.endsWith('/')) throw badOption('--textfile', raw.textfile, 'not a file');
    // node_exporter's textfile collector reads *.prom only: any other name would never be read.
    if (!/[^/]\.prom$/.test(raw.textfile))
      throw badOption('--textfile', raw.textfile, 'the name must end in .prom (node_exporter reads only those)');
    return { kind: 'textfile', path: raw.textfile };
  }
  if (raw.push !== undefined) return { kind: 'push', url: pushUrl(raw.push) };
  if (raw.listen !== undefined) return { kind: 'listen', ...listenAddress(raw.listen) };
  return { kind: 'stdout' };
}

/** An http(s) URL of a Pushgateway; the job and grouping labels are added to its path. */
function pushUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badOption('--push', redactUrl(value), 'not a URL; e.g. http://pushgateway:9091');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw badOption('--push', redactUrl(value), 'expected an http:// or https:// URL of a Pushgateway');
  if (url.search || url.hash) throw badOption('--push', redactUrl(value), 'expected no ?query or #fragment');
  return value;
}

/**
 * `port` alone listens on 127.0.0.1 only; another interface is named in full (`0.0.0.0:9464`,
 * `[::]:9464`, `host:9464`), so that the lock metrics (and the board, dlock serve) never face a
 * network by default.
 */
export function listenAddress(value: string): { host: string; port: number } {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || !(port >= 1 && port <= 65535))
    throw badOption('--listen', value, 'expected a port (on 127.0.0.1) or address:port, e.g. 9464 or 0.0.0.0:9464');
  const host = match[1]?.replace(/^\[(.*)\]$/, '$1') ?? '127.0.0.1';
  if (match[1]?.startsWith('[') && isIP(host) !== 6) throw badOption('--listen', value, 'not an IPv6 address');
  // Digits and dots only is meant as an IPv4 address: 256.0.0.1 or 1.2.3.4.5 is a typo, not a host name.
  if (/^[\d.]+$/.test(host) && isIP(host) !== 4) throw badOption('--listen', value, 'not an IPv4 address');
  return { host, port };
}
