// The heartbeat file of a --heartbeat run: a private file (0600, in the runtime directory only
// this user may use) whose path the command gets in DLOCK_HEARTBEAT_FILE. `dlock heartbeat`
// touches it; dlock watches it through the descriptor it created it with, so a file swapped in
// at that path (a symlink, a FIFO, something huge) is never opened or read: it only fails to
// count as a heartbeat. A change is any change of its mtime or ctime, never a comparison of
// times: a clock step cannot fake or hide a heartbeat (docs/reference/commands.md, "dlock heartbeat").
// A nested `dlock run --heartbeat` under a dlock that watches one already watches that same file
// (shared): it has no descriptor of it, so it only lstats the path (never opens or follows it, and
// anything but a regular file there is no heartbeat), and it leaves the file to its maker.

import { closeSync, fstatSync, lstatSync, openSync, rmSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';

export const HEARTBEAT_FILE_ENV = 'DLOCK_HEARTBEAT_FILE';
/**
 * The heartbeat files of the enclosing dlocks that watch one, colon-separated: a nested run with a
 * file of its own (another key) keeps its caller's here, and `dlock heartbeat` touches them all.
 */
export const HEARTBEAT_ENCLOSING_ENV = 'DLOCK_HEARTBEAT_ENCLOSING';

/** A path `dlock heartbeat` may touch: absolute, named heartbeat-*, no colon (the list's separator). */
export function isHeartbeatPath(path: string): boolean {
  return isAbsolute(path) && basename(path).startsWith('heartbeat-') && !path.includes(':');
}

/** A heartbeat path with a regular file there (lstat: never followed): a dlock still watching it. */
function isLiveHeartbeat(path: string): boolean {
  if (!isHeartbeatPath(path)) return false;
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

/** The non-empty entries of a DLOCK_HEARTBEAT_ENCLOSING list. */
export function enclosingEntries(list: string | undefined): string[] {
  return (list ?? '').split(':').filter((entry) => entry !== '');
}

/**
 * For a command given a heartbeat file of its own (`ownMs` its --heartbeat), under a caller whose
 * environment is `env`: DLOCK_HEARTBEAT_ENCLOSING (the caller's file and those enclosing it, when
 * the caller watches one) and DLOCK_HEARTBEAT_MS, the shortest of its own and the caller's.
 * Entries that are not heartbeat paths, or whose file is gone (a dlock that has ended: a shell
 * keeps the variables of a section it released), are dropped (never passed on).
 */
export function enclosingHeartbeats(
  env: Record<string, string | undefined>,
  ownMs: number,
): { DLOCK_HEARTBEAT_ENCLOSING: string | undefined; DLOCK_HEARTBEAT_MS: string } {
  const callerFile = env[HEARTBEAT_FILE_ENV];
  if (!callerFile || !isLiveHeartbeat(callerFile))
    return { DLOCK_HEARTBEAT_ENCLOSING: undefined, DLOCK_HEARTBEAT_MS: String(ownMs) };
  const files = [callerFile, ...enclosingEntries(env[HEARTBEAT_ENCLOSING_ENV])].filter(isLiveHeartbeat);
  const callerMs = Number(env.DLOCK_HEARTBEAT_MS);
  const ms = Number.isInteger(callerMs) && callerMs > 0 ? Math.min(ownMs, callerMs) : ownMs;
  return { DLOCK_HEARTBEAT_ENCLOSING: [...new Set(files)].join(':'), DLOCK_HEARTBEAT_MS: String(ms) };
}

export class HeartbeatFile {
  private seen: string;

  private constructor(
    /** Where `dlock heartbeat` finds it (DLOCK_HEARTBEAT_FILE). */
    readonly path: string,
    /** The descriptor it was created with; undefined for a shared file (watched by its path). */
    private readonly fd: number | undefined,
  ) {
    this.seen = this.stamp() ?? '';
  }

  /** A new file in `dir` (the runtime directory), or undefined when none could be made there. */
  static create(dir: string): HeartbeatFile | undefined {
    for (let attempt = 0; attempt < 5; attempt++) {
      const name = `heartbeat-${process.pid}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
      const path = join(dir, name);
      try {
        return new HeartbeatFile(path, openSync(path, 'wx', 0o600));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
      }
    }
    return undefined;
  }

  /**
   * The heartbeat file a calling dlock watches (its DLOCK_HEARTBEAT_FILE, which a nested run
   * inherits), or undefined when `path` is not one: an absolute path named heartbeat-*, a regular
   * file there (not a symlink, not a FIFO). Untrusted: only ever lstat'ed, never removed.
   */
  static shared(path: string): HeartbeatFile | undefined {
    if (!isAbsolute(path) || !basename(path).startsWith('heartbeat-')) return undefined;
    try {
      if (!lstatSync(path).isFile()) return undefined;
    } catch {
      return undefined;
    }
    return new HeartbeatFile(path, undefined);
  }

  /** True when the file was touched since the last call (or since it was made). */
  touched(): boolean {
    const stamp = this.stamp();
    if (stamp === undefined || stamp === this.seen) return false;
    this.seen = stamp;
    return true;
  }

  /** Remove it (a `dlock heartbeat` after this says its dlock has ended) and close it; a shared one is left alone. */
  remove(): void {
    if (this.fd === undefined) return;
    rmSync(this.path, { force: true });
    try {
      closeSync(this.fd);
    } catch {
      // closed already
    }
  }

  private stamp(): string | undefined {
    try {
      if (this.fd === undefined) {
        const stat = lstatSync(this.path, { bigint: true });
        return stat.isFile() ? `${stat.mtimeNs}:${stat.ctimeNs}` : undefined;
      }
      const stat = fstatSync(this.fd, { bigint: true });
      return `${stat.mtimeNs}:${stat.ctimeNs}`;
    } catch {
      return undefined;
    }
  }
}
