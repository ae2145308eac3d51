// Listening until a signal: the board (dlock serve) and the scrape endpoint (dlock metrics
// --listen) bind the same way, say where once, and stop on SIGTERM or SIGINT with exit 0.

import type { Server } from 'node:http';
import { DlockError } from '../errors.js';

/** The server bound to host:port; a bind that fails (port taken, address not here) is `failCode` with one line. */
export async function listenOn(server: Server, host: string, port: number, failCode: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => (server.off('error', reject), resolve()));
  }).catch((error: unknown) => {
    const why = error instanceof Error && 'code' in error ? String(error.code) : String(error);
    throw new DlockError(`--listen ${host}:${port}: cannot listen there (${why})`, failCode);
  });
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Resolves when SIGTERM or SIGINT came and the server has closed (open connections cut): the exit status, 0. */
export function untilStopped(server: Server): Promise<number> {
  return new Promise<number>((resolve) => {
    const stop = () => {
      process.off('SIGTERM', stop).off('SIGINT', stop);
      server.close(() => resolve(0));
      server.closeAllConnections();
    };
    process.on('SIGTERM', stop).on('SIGINT', stop);
  });
}
