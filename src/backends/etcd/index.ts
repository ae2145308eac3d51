// The etcd backend's entry: the one module of this folder that ../../backend/open.ts imports.
// Light on purpose: the lock engine and doctor's checks load when called.

import type { Backend, OpenOptions } from '../../backend/backend.js';
import type { DoctorOptions, DoctorReport } from '../../backend/doctor.js';
import type { EtcdConnection } from './connection.js';

/**
 * The cluster, ready for requests: nothing is sent yet (the first request finds an endpoint that
 * answers, within --connect-timeout, or fails with 69).
 */
export async function open(connection: EtcdConnection, { ttlMs }: OpenOptions): Promise<Backend> {
  const [{ EtcdBackend }, { Gateway }] = await Promise.all([import('./backend.js'), import('./gateway.js')]);
  return new EtcdBackend(connection, new Gateway(connection), ttlMs ?? 0);
}

/** Lock names under the prefix starting with `typed` (shell completion): one range, keys only. */
export function names(
  connection: EtcdConnection,
  typed: string,
  timeoutMs: number,
): { names: Promise<string[]>; close(): void } {
  let closed = false;
  let close = () => {};
  const found = (async () => {
    const { lookForNames } = await import('./names.js');
    if (closed) return [];
    const looking = lookForNames(connection, typed, timeoutMs);
    close = looking.close;
    return looking.names;
  })();
  // A close before the module loaded: nothing is sent then.
  return { names: found, close: () => ((closed = true), close()) };
}

/** dlock doctor: its checks load with it, never on a run. */
export async function doctor(connection: EtcdConnection, options: DoctorOptions): Promise<DoctorReport> {
  return (await import('./doctor.js')).doctor(connection, options);
}
