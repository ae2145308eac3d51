// redis+sentinel:// and redis+cluster:// URLs: a comma-separated host list, which the WHATWG
// URL parser cannot read, so the parts are taken apart here and each one checked.
//
//   redis+sentinel://[user:password@]host[:port][,host[:port]...]/<master name>[/<db>]
//   redis+cluster://[user:password@]host[:port][,host[:port]...]

import { badOption } from '../../../errors.js';
import type { RedisNode, RedisTarget } from './target.js';

const DEFAULT_PORT = { sentinel: 26379, cluster: 6379 } as const;
/** Highest database index accepted in a URL (Redis' own limit is the `databases` setting). */
export const MAX_DB = 2_147_483_647;

/** A %-encoded part of a URL, or a usage error naming the part. */
export function decode(option: string, shown: string, part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw badOption(option, shown, `the ${what} has a malformed %-escape`);
  }
}

/** One "host[:port]" of the list, or a usage error saying what is wrong with it. */
function parseNode(entry: string, defaultPort: number, option: string, shown: string): RedisNode & { text: string } {
  if (entry === '')
    throw badOption(option, shown, 'the host list has an empty entry (hosts are separated by single commas)');
  const match = /^(\[[^\]]*\]|[^:[\]]*)(?::(.*))?$/.exec(entry);
  if (!match || match[1] === '') throw badOption(option, shown, `"${entry}" is not a host or host:port`);
  const [, hostText, portText] = match;
  if (portText !== undefined && (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65_535)) {
    throw badOption(option, shown, `the port of "${entry}" must be from 1 to 65535`);
  }
  let hostname: string;
  try {
    hostname = new URL(`redis://${hostText}`).hostname;
  } catch {
    throw badOption(option, shown, `"${hostText}" is not a valid host name`);
  }
  if (!hostname) throw badOption(option, shown, `"${hostText}" is not a valid host name`);
  const port = portText === undefined ? defaultPort : Number(portText);
  return { host: hostname.replace(/^\[(.*)\]$/, '$1'), port, text: `${hostname}:${port}` };
}

/** Parse a redis+sentinel:// or redis+cluster:// URL (`shown` is it with the password masked). */
export function parseMultiHostUrl(text: string, shown: string, option: string): RedisTarget {
  const [prefix, tlsScheme, kindText] = /^(rediss?)\+(sentinel|cluster):\/\//i.exec(text)!;
  const kind = kindText.toLowerCase() as 'sentinel' | 'cluster';
  const scheme = `redis+${kind}://`;
  if (tlsScheme.toLowerCase() === 'rediss')
    throw badOption(
      option,
      shown,
      `TLS is not supported with ${kind === 'sentinel' ? 'Sentinel' : 'Cluster'}; use ${scheme}`,
    );
  if (text.includes('?') || text.includes('#'))
    throw badOption(option, shown, 'query strings and fragments are not supported');

  // The credentials end at the last "@", as redactUrl reads them, so a password may hold "@" or "/".
  const rest = text.slice(prefix.length);
  const at = rest.lastIndexOf('@');
  const userinfo = at >= 0 ? rest.slice(0, at) : undefined;
  const [hostList, ...path] = rest.slice(at + 1).split('/');
  const nodes = hostList.split(',').map((entry) => parseNode(entry, DEFAULT_PORT[kind], option, shown));

  const colon = userinfo?.indexOf(':') ?? -1;
  const userText = userinfo === undefined ? '' : colon >= 0 ? userinfo.slice(0, colon) : userinfo;
  const passwordText = userinfo !== undefined && colon >= 0 ? userinfo.slice(colon + 1) : '';
  const username = userText ? decode(option, shown, userText, 'user name') : undefined;
  const password = passwordText ? decode(option, shown, passwordText, 'password') : undefined;
  const auth = userText || passwordText ? `${userText}${passwordText ? ':***' : ''}@` : '';

  let masterName: string | undefined;
  let db = 0;
  if (kind === 'sentinel') {
    const [name = '', dbText, ...extra] = path;
    if (name === '')
      throw badOption(
        option,
        shown,
        `the URL needs the master's name after the hosts, as in ${scheme}host:26379/mymaster`,
      );
    masterName = decode(option, shown, name, "master's name");
    if (/[,@]/.test(masterName))
      throw badOption(
        option,
        shown,
        `the master's name must not contain "," or "@" (got ${JSON.stringify(masterName)})`,
      );
    if (extra.length > 0 || (dbText !== undefined && (!/^\d{1,10}$/.test(dbText) || Number(dbText) > MAX_DB))) {
      throw badOption(
        option,
        shown,
        `after the master's name only a database number may follow, as in ${scheme}host:26379/mymaster/0`,
      );
    }
    db = dbText === undefined ? 0 : Number(dbText);
  } else if (path.length > 1 || (path.length === 1 && path[0] !== '' && path[0] !== '0')) {
    throw badOption(
      option,
      shown,
      `a cluster has only database 0: give just the hosts, as in ${scheme}host:7000,host:7001`,
    );
  }

  const tail = masterName === undefined ? '' : `/${path[0]}${path[1] !== undefined ? `/${db}` : ''}`;
  return {
    kind,
    label: `${scheme}${auth}${nodes.map((node) => node.text).join(',')}${tail}`,
    host: nodes[0].host,
    port: nodes[0].port,
    nodes: nodes.map(({ host, port }) => ({ host, port })),
    masterName,
    username,
    password,
    db,
    tls: false,
  };
}
