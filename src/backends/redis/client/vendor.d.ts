// The two ioredis internals reply-guard.ts wraps (ioredis 5.9.2, pinned), typed as far as it uses them.
declare module 'redis-parser' {
  class RedisParser {
    buffer: Buffer | null;
    offset: number;
    bigStrSize: number;
    returnReply: (reply: unknown) => void;
    returnError: (error: Error) => void;
    returnFatalError: (error: Error) => void;
    reset(): void;
    execute(buffer: Buffer): void;
  }
  export = RedisParser;
}

declare module 'ioredis/built/DataHandler.js' {
  export default class DataHandler {
    redis: {
      condition?: { subscriber?: unknown } | null;
      commandQueue: { peekFront(): { command: { name: string; args: unknown[] } } | undefined };
    };
    returnReply(reply: unknown): void;
  }
}
