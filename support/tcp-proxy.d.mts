export interface DropReplyOptions {
  /** Replies that do not count as "the reply" and pass (e.g. -NOSCRIPT: the script did not run). */
  pass?: RegExp;
  /** After dropping: reset the connection (default), reset it and refuse new ones, or stall it. */
  then?: 'reset' | 'down' | 'stall';
}

export class TcpProxy {
  /** Listen on a free 127.0.0.1 port and forward every connection to `targetPort`. */
  static start(targetPort: number, targetHost?: string): Promise<TcpProxy>;
  readonly port: number;
  readonly url: string;
  /** Connections open now. */
  readonly connections: number;
  dropReplyTo(request: string | RegExp, options?: DropReplyOptions): Promise<void>;
  dropReplies(): void;
  stall(): void;
  resume(): void;
  delay(ms: number): void;
  reset(): void;
  refuse(refusing?: boolean): void;
  close(): Promise<void>;
}
