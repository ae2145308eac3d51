// The heartbeat file of a --heartbeat run or keeper, in the runtime directory. Imported lazily:
// the runtime directory's module loads node:crypto, which a plain `dlock run` does not.

import { UsageError } from '../errors.js';
import { runtimeDir } from '../keeper/runtime.js';
import { HeartbeatFile } from './heartbeat-file.js';

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
