// Assertions shared by the hostile-input, TLS and ACL tests.

import { createServer, type Server } from 'node:net';
import { expect } from 'vitest';
import type { Result } from './cli.js';

/** dlock failed the way the SPEC says: `code`, and exactly one stderr line "dlock: ..." (no stack). */
export function expectOneError(result: Result, code: number, pattern?: RegExp | string): string {
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  expect(result.code, `stderr: ${result.stderr}`).toBe(code);
  expect(lines, `stderr: ${result.stderr}`).toHaveLength(1);
  expect(lines[0]).toMatch(/^dlock: /);
  expect(result.stderr).not.toMatch(/\n\s+at |Error:|internal error/);
  if (pattern !== undefined) expect(lines[0]).toMatch(pattern);
  return lines[0];
}

/** A plain TCP listener on loopback that counts connections: proof that nothing was contacted. */
export class ConnectionRecorder {
  connections = 0;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<ConnectionRecorder> {
    const server = createServer();
    const recorder = new ConnectionRecorder(server);
    server.on('connection', (socket) => {
      recorder.connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return recorder;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
