// The heartbeat file of a --heartbeat run or keeper, in the runtime directory (../runtime-dir.ts;
// or, for a nested run, the one its calling dlock watches). Imported lazily: only a --heartbeat run
// needs it.

import { UsageError } from '../errors.js';
import { runtimeDir } from '../runtime-dir.js';
import { cut, toJson } from '../untrusted.js';
import { HEARTBEAT_FILE_ENV, HeartbeatFile } from './heartbeat-file.js';

/** A new heartbeat file; a usage error (64) when there is no private runtime directory to make it in. */
export function heartbeatFile(): HeartbeatFile {
  const dir = runtimeDir();
  const file = dir === undefined ? undefined : HeartbeatFile.create(dir);
  if (!file) {
    throw new UsageError(
      '--heartbeat needs a private runtime directory ($XDG_RUNTIME_DIR/dlock, else <tmpdir>/dlock-<uid>: ' +
        'owned by this user, not writable by others) to make its heartbeat file in',
    );
  }
  return file;
}

/**
 * A nested run's --heartbeat file: the one its calling dlock watches (an inherited
 * DLOCK_HEARTBEAT_FILE: shared, `own` false), else a new one (`own`: the run hands it to its
 * command and removes it). An inherited value that is not a dlock heartbeat file is a usage error (64).
 */
export function nestedHeartbeatFile(inherited: string | undefined): { file: HeartbeatFile; own: boolean } {
  if (inherited === undefined || inherited === '') return { file: heartbeatFile(), own: true };
  const file = HeartbeatFile.shared(inherited);
  if (!file) {
    throw new UsageError(
      `--heartbeat: ${HEARTBEAT_FILE_ENV} is not a dlock heartbeat file (an absolute path to a regular file ` +
        `named heartbeat-*), got ${toJson(cut(inherited, 200))}`,
    );
  }
  return { file, own: false };
}
