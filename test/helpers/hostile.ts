// Assertions shared by the hostile-input, TLS and ACL tests.

import { createServer, type Server } from 'node:net';
import { expect } from 'vitest';
import type { Result } from './cli.js';

/**
 * dlock's error lines in a stderr transcript: "dlock: ..." text lines, and the error events of
 * --log-format json shown the same way (other JSON events left out).
 */
export function errorLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line !== '')
    .flatMap((line) => {
      if (!line.startsWith('{')) return [line];
      const event = JSON.parse(line) as { event: string; message?: string };
      return event.event === 'error' || event.event === 'busy' ? [`dlock: ${event.message}`] : [];
    });
}

/**
 * dlock failed the way docs/reference/exit-codes.md says: `code`, and exactly one stderr line "dlock: ..." (no
 * stack), or in json mode exactly one error event with that exit code and nothing else.
 */
export function expectOneError(result: Result, code: number, pattern?: RegExp | string): string {
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  expect(result.code, `stderr: ${result.stderr}`).toBe(code);
  expect(lines, `stderr: ${result.stderr}`).toHaveLength(1);
  if (lines[0].startsWith('{')) {
    expect(JSON.parse(lines[0]), `stderr: ${result.stderr}`).toMatchObject({
      exit_code: code,
      message: expect.any(String),
    });
    lines[0] = errorLines(lines[0])[0];
  }
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
