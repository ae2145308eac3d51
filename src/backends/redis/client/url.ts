// Redis URLs as users write them, parsed once and shown only without their password.

import { badOption } from '../../../errors.js';
import { redactUrl } from '../../../secrets.js';
import { decode, MAX_DB, parseMultiHostUrl } from './multi-host-url.js';
import type { RedisTarget } from './target.js';

const MULTI_HOST = /^\s*rediss?\+(sentinel|cluster):\/\//i;
const ANY_SCHEME = /^\s*[a-z][a-z0-9+.-]*:\/\//i;

/**
 * DLOCK_REDIS_URL's list of URLs: a new URL starts after a comma only where the text after it
 * starts with a scheme ("redis://", "rediss://", "redis+sentinel://", ...); any other comma
 * belongs to the URL before it (a redis+sentinel:// host list, or a password holding ","),
 * so no part of a password ever stands alone in a message. Commas and blanks that end an
 * entry are dropped, and so are blank entries.
 */
export function splitRedisUrls(text: string): string[] {
  const urls: string[] = [];
  for (const part of text.split(',')) {
    if (urls.length > 0 && !ANY_SCHEME.test(part)) urls[urls.length - 1] += `,${part}`;
    else urls.push(part);
  }
  return urls.map(trimEndOfEntry).filter((url) => url.trim() !== '');
}

/** `url` without the commas and blanks that end it; a backward scan, linear in its length. */
function trimEndOfEntry(url: string): string {
  let end = url.length;
  while (end > 0 && (url[end - 1] === ',' || /\s/.test(url[end - 1]))) end--;
  return url.slice(0, end);
}

/**
 * Parse one redis://, rediss://, redis+sentinel:// or redis+cluster:// URL; `option` names the flag or env var for
 * errors.
 */
export function parseRedisUrl(raw: string, option: string): RedisTarget {
  const text = raw.trim();
  const shown = redactUrl(text);
  // WHATWG URL parsing silently drops tabs and newlines; a URL holding them is a mistake.
  if (/[\p{C}\s]/u.test(text)) throw badOption(option, shown, 'the URL contains whitespace or control characters');
  if (MULTI_HOST.test(text)) return parseMultiHostUrl(text, shown, option);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw badOption(option, shown, 'not a valid URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw badOption(option, shown, 'expected a redis://, rediss://, redis+sentinel:// or redis+cluster:// URL');
  }
  if (!text.slice(url.protocol.length).startsWith('//')) throw badOption(option, shown, 'expected redis://host:port');
  if (!url.hostname) throw badOption(option, shown, 'the URL has no host');
  const port = url.port ? Number(url.port) : 6379;
  if (port < 1 || port > 65_535) throw badOption(option, shown, 'the port must be from 1 to 65535');
  const path = url.pathname.replace(/^\//, '');
  if (path !== '' && (!/^\d{1,10}$/.test(path) || Number(path) > MAX_DB)) {
    throw badOption(option, shown, 'the database must be a number, as in redis://host:6379/0');
  }
  if (url.search || url.hash || text.includes('?') || text.includes('#')) {
    throw badOption(option, shown, 'query strings and fragments are not supported');
  }
  const username = url.username ? decode(option, shown, url.username, 'user name') : undefined;
  const password = url.password ? decode(option, shown, url.password, 'password') : undefined;
  const auth = url.username || url.password ? `${url.username}${url.password ? ':***' : ''}@` : '';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    kind: 'standalone',
    label: `${url.protocol}//${auth}${url.host}${path ? `/${path}` : ''}`,
    host,
    port,
    nodes: [{ host, port }],
    username,
    password,
    db: path ? Number(path) : 0,
    tls: url.protocol === 'rediss:',
  };
}
