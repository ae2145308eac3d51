// The runtime directory: where dlock leaves what others on this host must find, in a directory only
// this user may use ($XDG_RUNTIME_DIR/dlock, else <tmpdir>/dlock-<uid>). A keeper's pid file, its
// notes and keeper.log (keeper/runtime.ts), the marks of ended sections (keeper/ended.ts), the
// sentinel's log (keeper/sentinel.ts) and --heartbeat files (bounds/make.ts) live there.

import { lstatSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Env } from './config/index.js';

/**
 * The runtime directory, created if missing; undefined when it is not safely ours (another owner, writable by others).
 */
export function runtimeDir(env: Env = process.env): string | undefined {
  const uid = process.getuid?.() ?? 0;
  const dir = env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, 'dlock') : join(tmpdir(), `dlock-${uid}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = lstatSync(dir);
    if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o022) !== 0) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}
