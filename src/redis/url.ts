// Redis URLs as users write them, parsed once and shown only without their password.

import { badOption } from '../errors.js';

export interface RedisTarget {
  /** What messages may show: the URL with any password replaced by "***". */
  label: string;
  host: string;
  port: number;
  username?: string;
  password?: string;
  db: number;
  tls: boolean;
}

/** The URL with its password (if any) masked; safe for any output. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z+]+:\/\/)([^@/]*)@/i, (_all, scheme: string, auth: string) => {
    const colon = auth.indexOf(':');
    return colon < 0 ? `${scheme}***@` : `${scheme}${auth.slice(0, colon)}${colon ? ':' : ''}***@`;
  });
}

/** Parse one redis:// or rediss:// URL; `option` names the flag or env var for errors. */
export function parseRedisUrl(raw: string, option: string): RedisTarget {
  const text = raw.trim();
  const shown = redactUrl(text);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw badOption(option, shown, 'not a valid URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw badOption(option, shown, 'expected a redis:// or rediss:// URL');
  }
  if (!url.hostname) throw badOption(option, shown, 'the URL has no host');
  const port = url.port ? Number(url.port) : 6379;
  const path = url.pathname.replace(/^\//, '');
  if (path !== '' && !/^\d+$/.test(path)) {
    throw badOption(option, shown, 'the database must be a number, as in redis://host:6379/0');
  }
  if (url.search || url.hash) throw badOption(option, shown, 'query strings and fragments are not supported');
  const auth = url.username || url.password ? `${url.username}${url.password ? ':***' : ''}@` : '';
  return {
    label: `${url.protocol}//${auth}${url.host}${path ? `/${path}` : ''}`,
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: path ? Number(path) : 0,
    tls: url.protocol === 'rediss:',
  };
}
