// Whatever a server sends, dlock must not crash, hang or believe it. ioredis reads replies with
// redis-parser, which recurses once per nested array (100 000 levels overflow the stack inside
// a socket 'data' handler: an uncaught exception) and buffers a bulk string of any announced
// length; and it acts on some replies itself without checking them (CLUSTER SLOTS, SENTINEL
// get-master-addr-by-name, pub/sub messages), where a wrong type throws inside the client or,
// for a host name, reaches node's C++ layer. This wraps both places once, before any client
// connects: a reply that breaks these rules fails the connection with an UnreadReplyError (a
// MalformedReplyError), which every pending command on it receives, and nothing of it is used.

import DataHandlerModule from 'ioredis/built/DataHandler.js';
import RedisParser from 'redis-parser';
import { MalformedReplyError, UnreadReplyError } from './describe.js';
import { checkClientReply, checkPushReply } from './reply-shapes.js';

/**
 * The largest reply dlock reads; dlock's own are a few KiB (a SCAN page, CLUSTER SLOTS of a large cluster: < 4 MiB).
 */
const MAX_REPLY_BYTES = 8 * 1024 * 1024;

interface GuardState {
  /** Bytes fed to the parser so far, and where the last whole reply ended. */
  fed: number;
  replyEnd: number;
  dead: boolean;
}

const states = new WeakMap<RedisParser, GuardState>();
let installed = false;

/** ioredis' module is CommonJS with an `exports.default`: under Node's ESM interop the class is one level down. */
const DataHandler =
  (DataHandlerModule as unknown as { default?: typeof DataHandlerModule }).default ?? DataHandlerModule;

export function installReplyGuard(): void {
  if (installed) return;
  installed = true;

  const execute = RedisParser.prototype.execute;
  RedisParser.prototype.execute = function guardedExecute(this: RedisParser, buffer: Buffer) {
    const state = states.get(this) ?? watch(this);
    // After a fatal error the connection is being closed; bytes still in flight mean nothing.
    if (state.dead) return;
    state.fed += buffer.length;
    try {
      execute.call(this, buffer);
    } catch (error) {
      fail(
        this,
        state,
        error instanceof MalformedReplyError
          ? error.reason
          : error instanceof RangeError
            ? 'it sent a reply nested too deep or too large to read'
            : 'it sent a reply the Redis client could not read',
      );
      return;
    }
    // Mid-reply: refuse a bulk string announced larger than the limit at once, not once it arrived.
    if (this.buffer !== null && (this.bigStrSize > MAX_REPLY_BYTES || state.fed - state.replyEnd > MAX_REPLY_BYTES)) {
      fail(this, state, `it sent a reply larger than ${MAX_REPLY_BYTES / 1024 / 1024} MiB (dlock reads no more)`);
    }
  };

  const returnReply = DataHandler.prototype.returnReply;
  DataHandler.prototype.returnReply = function guardedReturnReply(this: DataHandlerModule, reply: unknown) {
    // Thrown inside the parser's execute(): the wrapper above fails the connection.
    const problem = this.redis.condition?.subscriber
      ? checkPushReply(reply)
      : checkClientReply(this.redis.commandQueue.peekFront()?.command, reply);
    if (problem) throw new MalformedReplyError(problem);
    returnReply.call(this, reply);
  };
}

/** Track where each whole reply ends, to bound the size of the one being read. */
function watch(parser: RedisParser): GuardState {
  const state: GuardState = { fed: 0, replyEnd: 0, dead: false };
  states.set(parser, state);
  const ended = () => {
    // The current buffer always ends at the last byte fed; the reply ends at `offset` in it.
    if (parser.buffer) state.replyEnd = state.fed - (parser.buffer.length - parser.offset);
  };
  const { returnReply, returnError } = parser;
  parser.returnReply = (reply) => (ended(), returnReply(reply));
  parser.returnError = (error) => (ended(), returnError(error));
  return state;
}

function fail(parser: RedisParser, state: GuardState, reason: string): void {
  state.dead = true;
  parser.reset();
  // ioredis rejects every command waiting on this connection with it and closes the connection.
  parser.returnFatalError(new UnreadReplyError(reason));
}
