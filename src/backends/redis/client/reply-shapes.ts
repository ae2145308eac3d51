// The replies ioredis acts on by itself, checked before it does (reply-guard.ts): the shapes
// a real Redis, Sentinel or Cluster sends. Each check returns what is wrong, or undefined.
// Replies here are raw: bulk and simple strings are Buffers, integers numbers, nil null.

const isText = Buffer.isBuffer;
const isInt = (value: unknown, min: number, max: number): value is number =>
  Number.isInteger(value) && (value as number) >= min && (value as number) <= max;

/** A host as a server names another node: a name or an IP address, nothing else. */
function isHost(value: unknown): boolean {
  return isText(value) && /^[A-Za-z0-9._:%-]{1,253}$/.test(value.toString('latin1'));
}

function isPort(value: unknown): boolean {
  return isText(value)
    ? /^\d{1,5}$/.test(value.toString('latin1')) && isInt(Number(value.toString('latin1')), 1, 65_535)
    : isInt(value, 1, 65_535);
}

/** A flat list of field/value pairs of strings (SENTINEL sentinels / replicas entries). */
function isFlatTextMap(value: unknown): value is Buffer[] {
  return Array.isArray(value) && value.length % 2 === 0 && value.every(isText);
}

function field(map: Buffer[], name: string): Buffer | undefined {
  for (let i = 0; i + 1 < map.length; i += 2) if (map[i].toString('latin1') === name) return map[i + 1];
  return undefined;
}

const SENTINEL_ADDRESS = 'an address that is not [host, port]';
const CLUSTER_SLOTS = 'CLUSTER SLOTS answered with something that is not a slot map';

function checkSentinel(subcommand: string, reply: unknown): string | undefined {
  switch (subcommand) {
    case 'get-master-addr-by-name':
      // nil: no master by that name (ioredis says so).
      if (reply === null) return undefined;
      return Array.isArray(reply) && reply.length === 2 && isHost(reply[0]) && isPort(reply[1])
        ? undefined
        : `the sentinel answered ${SENTINEL_ADDRESS}`;
    case 'sentinels':
    case 'slaves':
    case 'replicas': {
      // nil or not a list: ioredis ignores it; each node it would connect to must be one.
      const ok =
        !Array.isArray(reply) ||
        reply.every(
          (entry) =>
            isFlatTextMap(entry) &&
            [field(entry, 'ip'), field(entry, 'port')].every(
              (v, i) => v === undefined || (i === 0 ? isHost(v) : isPort(v)),
            ),
        );
      return ok ? undefined : `the sentinel answered SENTINEL ${subcommand} with something that is not a list of nodes`;
    }
  }
  return undefined;
}

function checkSlots(reply: unknown): string | undefined {
  if (!Array.isArray(reply) || reply.length > 16_384) return CLUSTER_SLOTS;
  for (const range of reply) {
    if (
      !Array.isArray(range) ||
      range.length < 3 ||
      !isInt(range[0], 0, 16_383) ||
      !isInt(range[1], range[0] as number, 16_383)
    )
      return CLUSTER_SLOTS;
    for (const node of range.slice(2)) {
      const emptyHost = isText(node?.[0]) && node[0].length === 0;
      if (!Array.isArray(node) || node.length < 2 || !(emptyHost || isHost(node[0])) || !isInt(node[1], 0, 65_535))
        return CLUSTER_SLOTS;
    }
  }
  return undefined;
}

/** A reply to a command ioredis interprets itself (ready checks, Sentinel, Cluster, SUBSCRIBE). */
export function checkClientReply(
  command: { name: string; args: unknown[] } | undefined,
  reply: unknown,
): string | undefined {
  if (!command || reply instanceof Error) return undefined;
  const sub = String(command.args[0] ?? '').toLowerCase();
  switch (command.name.toLowerCase()) {
    case 'info':
      return isText(reply) ? undefined : 'INFO was answered with something that is not text';
    case 'cluster':
      if (sub === 'slots') return checkSlots(reply);
      if (sub === 'info')
        return isText(reply) ? undefined : 'CLUSTER INFO was answered with something that is not text';
      return undefined;
    case 'sentinel':
      return checkSentinel(sub, reply);
    case 'subscribe':
    case 'psubscribe':
    case 'ssubscribe':
    case 'unsubscribe':
    case 'punsubscribe':
    case 'sunsubscribe':
      return checkPushReply(reply);
  }
  return undefined;
}

/** A message on a subscribed connection: [kind, channel, payload] and the like. */
export function checkPushReply(reply: unknown): string | undefined {
  const bad = 'it sent a malformed pub/sub message';
  if (!Array.isArray(reply) || !isText(reply[0])) return bad;
  const [, ...rest] = reply;
  switch (reply[0].toString('latin1').toLowerCase()) {
    case 'message':
    case 'smessage':
      return rest.length === 2 && rest.every(isText) ? undefined : bad;
    case 'pmessage':
      return rest.length === 3 && rest.every(isText) ? undefined : bad;
    case 'subscribe':
    case 'psubscribe':
    case 'ssubscribe':
    case 'unsubscribe':
    case 'punsubscribe':
    case 'sunsubscribe':
      return rest.length === 2 && (isText(rest[0]) || rest[0] === null) && isInt(rest[1], 0, Number.MAX_SAFE_INTEGER)
        ? undefined
        : bad;
    case 'pong':
      return rest.length === 1 && isText(rest[0]) ? undefined : bad;
  }
  return bad;
}
