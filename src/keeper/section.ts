// What a keeper stops, and holds its lock for: the section. While the watched shell runs, that is
// the shell and what it started (../child/tree.ts walks it when a stop is due); once it has exited,
// its background steps — what still carries the section's token (DLOCK_TOKEN=<token>, exported
// by the eval) in the shell's session, started since the keeper, and the subshells that run them —
// keep the lock held, renewed and watched, as `dlock run` holds it for its command's (one walk of
// /proc when the shell exits, one every 100 ms while some run). A daemon started with `setsid -f`
// has left the session: not waited for. Where there is no /proc, the shell alone.

import { ChildSignals, type SignalTarget } from '../child/child-signals.js';
import { kill, readEntry, type SectionScope } from '../child/tree.js';
import type { AcquireConfig } from '../config/index.js';
import type { KeeperLogger } from './log.js';

/**
 * The watched shell's session and start, and the keeper's start: read as the keeper starts, before
 * the shell can exit. Undefined when /proc cannot tell (or the shell is gone already).
 */
export function sectionScope(shell: number): SectionScope | undefined {
  const entry = readEntry(shell);
  const self = readEntry(process.pid);
  return entry && self && !entry.zombie ? { shell: entry, since: self.start } : undefined;
}

/** The signals that stop `shell`'s section (held by `token` as `fence`), and what waits for its background steps. */
export function sectionSignals(
  config: Pick<AcquireConfig, 'key' | 'killAfterMs'>,
  shell: number,
  lock: { token: string; fence: string },
  scope: SectionScope | undefined,
  log: KeeperLogger,
): ChildSignals {
  const mark = scope === undefined ? undefined : `DLOCK_TOKEN=${lock.token}`;
  const { key, killAfterMs } = config;
  return new ChildSignals(
    shellTarget(shell, scope),
    log,
    { key, fence: lock.fence },
    killAfterMs,
    'the watched process',
    mark,
    scope,
  );
}

/** The watched shell, signalled while it runs: never another process that got its pid since it exited. */
function shellTarget(pid: number, scope: SectionScope | undefined): SignalTarget {
  return {
    pid,
    kill(signal) {
      const entry = readEntry(pid);
      if (entry && !entry.zombie && (scope === undefined || entry.start === scope.shell.start)) kill(pid, signal);
    },
  };
}
