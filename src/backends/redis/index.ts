// The Redis backend's entry: the one module of this folder that ../../backend/open.ts imports.
// Light on purpose: each operation loads its engine when called (doctor loads no lock code, a run
// no doctor code).

import type { Backend, OpenOptions } from '../../backend/backend.js';
import type { DoctorOptions, DoctorReport } from '../../backend/doctor.js';
import type { RedisConnection } from './connection.js';

export { lookForNames as names } from './names.js';

/** Connect to the instances within --connect-timeout (69 when too few answer for a quorum). */
export async function open(connection: RedisConnection, { ttlMs }: OpenOptions): Promise<Backend> {
  const [{ RedisBackend }, { openLockSet }] = await Promise.all([import('./backend.js'), import('./open.js')]);
  return new RedisBackend(connection, await openLockSet(connection, '', ttlMs));
}

/** dlock doctor: its checks load with it, never on a run. */
export async function doctor(connection: RedisConnection, options: DoctorOptions): Promise<DoctorReport> {
  return (await import('./doctor/run.js')).doctor(connection, options);
}
