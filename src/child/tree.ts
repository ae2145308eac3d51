// The whole command, not only its first process: what it started (its descendants, found by walking
// /proc's pid → ppid links), the process groups it made for itself, and for `dlock run` the
// processes that carry its lock's token in their environment in dlock's session (a background
// child reparented away from the tree). A signal meant to stop the command reaches all of them, and
// `dlock run` holds the lock until all are gone. Out of reach: a process that left the tree before a
// walk found it (a double fork reparents it to init) and then is in neither dlock's session nor a
// group the command made, or does not carry the token; see docs/guarantees.md. Where there is no
// /proc (not Linux) the command is its first process alone.

import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';

/** One process as /proc/<pid>/stat tells it. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  /** Its process group. */
  pgid: number;
  /** Its session. */
  session: number;
  /** When it started (clock ticks since boot): tells a reused pid apart. */
  start: string;
  /** Dead, not reaped yet: nothing left to stop. */
  zombie: boolean;
}

/** Every process on this host, by pid (empty without /proc): one read of /proc/<pid>/stat each. */
export function processTable(): Map<number, ProcessEntry> {
  const table = new Map<number, ProcessEntry>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return table;
  }
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue; // not a pid: self, sys, ...
    const entry = readEntry(Number(name));
    if (entry) table.set(entry.pid, entry);
  }
  return table;
}

/** One buffer for every read of /proc/<pid>/stat (a line of at most ~1 KB). */
const statBuffer = Buffer.alloc(4096);

/**
 * `pid`'s /proc entry, undefined once it is gone. Read into one buffer (open, read, close: no
 * fstat, no allocation): a walk reads every process's, and a stop waits for it.
 */
export function readEntry(pid: number): ProcessEntry | undefined {
  let stat: string;
  let fd: number | undefined;
  try {
    fd = openSync(`/proc/${pid}/stat`, 'r');
    stat = statBuffer.toString('latin1', 0, readSync(fd, statBuffer, 0, statBuffer.length, 0));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  // "pid (comm) S ppid pgid ...": comm may hold ")" and spaces; field 22 is the start time.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 20);
  return {
    pid,
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    session: Number(fields[3]),
    start: fields[22 - 3] ?? '',
    zombie: fields[0] === 'Z',
  };
}

/** The processes below `roots` (children, their children, ...), linear in the table's size. */
export function descendants(roots: Iterable<number>, table = processTable()): ProcessEntry[] {
  const children = new Map<number, ProcessEntry[]>();
  for (const entry of table.values()) {
    const siblings = children.get(entry.ppid);
    if (siblings) siblings.push(entry);
    else children.set(entry.ppid, [entry]);
  }
  const found: ProcessEntry[] = [];
  const seen = new Set<number>(roots);
  const queue = [...seen];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/**
 * One command's processes across the signals that stop it: each `signal` walks /proc again (new
 * processes may have been forked) from the first process and from every process seen before (one
 * whose parent died was reparented out of the tree, but is still the command's), and signals the
 * groups the command leads. Never dlock itself, its ancestors, or its own process group.
 *
 * With a `mark` (the environment entry `DLOCK_TOKEN=<token>` of the lock `dlock run` holds for
 * it) a walk also finds the command's processes that were reparented before any walk saw them (a
 * background child of a shell that has exited): those that carry the mark in their environment
 * and run in dlock's session, or in a group or session the command made. A process that left the
 * session (`setsid -f`) before a walk saw it is out of reach: the way to leave a daemon behind.
 */
export class CommandTree {
  /** Every process seen in the command, with its start time (a reused pid is not the command's). */
  private readonly members = new Map<number, string>();
  /** Process groups (and sessions) a process of the command led. */
  private readonly groups = new Set<number>();
  /** dlock's own session and start time: where, and since when, a marked process may be found. */
  private readonly self: ProcessEntry | undefined;

  constructor(
    private readonly root: number,
    private readonly mark?: string,
  ) {
    const entry = readEntry(root);
    if (entry) this.members.set(root, entry.start);
    if (mark !== undefined) this.self = readEntry(process.pid);
  }

  /**
   * Send `signal` to the whole command: `signalFirst` signals its first process (the caller knows
   * how), after the walk, so that none of its children was reparented away unseen. Returns the pids
   * signalled besides the first.
   */
  signal(signal: NodeJS.Signals, signalFirst: () => void): number[] {
    // A SIGKILL is due now (a deadline): the walk takes milliseconds, so the processes known already
    // are stopped first, which also keeps them from exiting (and their children from being reparented).
    if (signal === 'SIGKILL') this.freezeKnown();
    const { spared, others } = this.walk();
    signalFirst();
    for (const group of this.groups) {
      if (!spared.groups.has(group)) kill(-group, signal);
    }
    for (const pid of others) kill(pid, signal);
    return others;
  }

  /** Note the command's processes as they are now (ahead of a SIGKILL that may find them reparented). */
  remember(): void {
    this.walk();
  }

  /** Processes of the command other than its first one that still run: none once every one is gone. */
  survivors(): number[] {
    return [...this.members]
      .filter(([pid, start]) => {
        const entry = pid === this.root ? undefined : readEntry(pid);
        return entry !== undefined && entry.start === start && !entry.zombie;
      })
      .map(([pid]) => pid);
  }

  /** Walk /proc now: the processes of the command other than its first one that still run. */
  remaining(): number[] {
    return this.walk().others;
  }

  /** SIGSTOP every process of the command seen so far that still runs as the same process. */
  private freezeKnown(): void {
    for (const [pid, start] of this.members) {
      const entry = readEntry(pid);
      if (entry && entry.start === start && !entry.zombie) kill(pid, 'SIGSTOP');
    }
  }

  /** Walk /proc from the first process, every member seen before and the marked; note members and groups. */
  private walk(): { spared: Spared; others: number[] } {
    const table = processTable();
    const spared = sparedBy(process.pid, table);
    const roots = [...this.stillMembers(table), ...this.marked(table, spared)];
    for (const entry of [
      ...roots,
      ...descendants(
        roots.map((root) => root.pid),
        table,
      ),
    ]) {
      if (spared.pids.has(entry.pid)) continue;
      if (!this.members.has(entry.pid)) this.members.set(entry.pid, entry.start);
      if (entry.pgid === entry.pid && !spared.groups.has(entry.pgid)) this.groups.add(entry.pgid);
    }
    const others = [...this.stillMembers(table)].map((entry) => entry.pid).filter((pid) => pid !== this.root);
    return { spared, others };
  }

  /** Members seen before that still run as the same process. */
  private *stillMembers(table: Map<number, ProcessEntry>): Iterable<ProcessEntry> {
    for (const [pid, start] of this.members) {
      const entry = table.get(pid);
      if (entry && entry.start === start && !entry.zombie) yield entry;
    }
  }

  /**
   * Processes not seen before that carry the mark, in dlock's session or in a group or session the
   * command made, started since dlock: only their environment is read, and only theirs.
   */
  private *marked(table: Map<number, ProcessEntry>, spared: Spared): Iterable<ProcessEntry> {
    const { self, mark } = this;
    if (!self || mark === undefined) return;
    for (const entry of table.values()) {
      if (entry.zombie || spared.pids.has(entry.pid) || this.members.has(entry.pid)) continue;
      const near = entry.session === self.session || this.groups.has(entry.pgid) || this.groups.has(entry.session);
      if (near && Number(entry.start) >= Number(self.start) && carriesMark(entry.pid, mark)) yield entry;
    }
  }
}

/** Does `pid`'s environment (as it was exec'd with) hold the entry `mark` ("NAME=value")? */
export function carriesMark(pid: number, mark: string): boolean {
  try {
    return hasEntry(readFileSync(`/proc/${pid}/environ`), mark);
  } catch {
    return false; // gone, or not ours to read
  }
}

/** Does `environ` (NUL-separated "NAME=value" entries) hold the entry `mark`? */
export function hasEntry(environ: Buffer, mark: string): boolean {
  const entry = Buffer.from(`${mark}\0`);
  for (let at = environ.indexOf(entry); at >= 0; at = environ.indexOf(entry, at + 1)) {
    if (at === 0 || environ[at - 1] === 0) return true;
  }
  return false;
}

interface Spared {
  pids: Set<number>;
  groups: Set<number>;
}

/** dlock itself and its ancestors, and their process groups: never signalled as part of a command. */
function sparedBy(self: number, table: Map<number, ProcessEntry>): Spared {
  const pids = new Set<number>();
  const groups = new Set<number>();
  for (let entry = table.get(self); entry && !pids.has(entry.pid); entry = table.get(entry.ppid)) {
    pids.add(entry.pid);
    groups.add(entry.pgid);
  }
  return { pids, groups };
}

/** process.kill that ignores a process (or group: a negative `target`) gone meanwhile. */
export function kill(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // Gone meanwhile.
  }
}
