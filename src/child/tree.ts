// The whole command, not only its first process: what it started (its descendants, found by walking
// /proc's pid → ppid links), the process groups it made for itself, and for `dlock run` the
// processes in dlock's session that carry its lock's token in their environment (a background
// child reparented away from the tree). A signal meant to stop the command reaches all of them, and
// `dlock run` holds the lock while one runs in dlock's session. A `dlock acquire` section's keeper
// (../keeper/keeper.ts) walks its section the same way once the shell that ran it is gone: the
// processes that carry the section's token in the shell's session, started since the keeper (a
// SectionScope in place of dlock's own session and start). Out of reach: a process that left
// the session (`setsid -f`: the way to leave a daemon behind) and is no longer below a process of
// the command, or that never carried the token, nor started one that does, and was reparented
// before a walk found it; see docs/guarantees.md. Where there is no /proc (not Linux) the command
// is its first process alone.

import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { now } from '../clock.js';

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

/**
 * Every process on this host, by pid (empty without /proc): one read of /proc/<pid>/stat each;
 * only those from pid `from` up when it is given.
 */
export function processTable(from = 0): Map<number, ProcessEntry> {
  const table = new Map<number, ProcessEntry>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return table;
  }
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue; // not a pid: self, sys, ...
    const pid = Number(name);
    if (pid < from) continue;
    const entry = readEntry(pid);
    if (entry) table.set(entry.pid, entry);
  }
  return table;
}

/** One buffer for every read of a small /proc file (/proc/<pid>/stat: a line of at most ~1 KB). */
const statBuffer = Buffer.alloc(4096);

/** A small /proc file read into one buffer (open, read, close: no fstat, no allocation); undefined if unreadable. */
function readSmall(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    return statBuffer.toString('latin1', 0, readSync(fd, statBuffer, 0, statBuffer.length, 0));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** `pid`'s /proc entry, undefined once it is gone: a walk reads every process's, and a stop waits for it. */
export function readEntry(pid: number): ProcessEntry | undefined {
  const stat = readSmall(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
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

/**
 * Where a section's processes are found when its tree is not dlock's own command: the shell that
 * runs it as the keeper first saw it (it may have exited, and its pid been reused, by a walk), and
 * the keeper's start (a marked process started before it is not the section's).
 */
export interface SectionScope {
  shell: ProcessEntry;
  since: string;
}

/** The session a marked process is looked for in, since when, and who is looking (never one of them). */
interface Scope {
  pid: number;
  session: number;
  start: string;
}

/** How many pids a walk may assume were handed out per millisecond at most (see lowestPid). */
const PIDS_PER_MS = 1000;
let pidMax: number | undefined;

/** The pid counter's limit (/proc/sys/kernel/pid_max), read once; the lowest Linux allows if unreadable. */
function pidSpace(): number {
  if (pidMax === undefined) {
    pidMax = Number(readSmall('/proc/sys/kernel/pid_max')?.trim()) || 301;
  }
  return pidMax;
}

/** The pid last handed out in this pid namespace (/proc/loadavg's fifth field); undefined if unknown. */
function lastPid(): number | undefined {
  const last = Number(readSmall('/proc/loadavg')?.split(' ')[4]);
  return Number.isInteger(last) ? last : undefined;
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
 * background child of a shell that has exited): those in dlock's session that carry the mark, and
 * their parents there started since dlock (a subshell forked by a shell that was not exec'd with
 * the mark: a section's). And a process seen before stays the command's only while it is in that
 * session (or below a process that is): one that left it (`setsid -f`) has opted out. With a
 * `section` (a keeper's), the session is the section shell's and "since" is the keeper's start.
 */
export class CommandTree {
  /** Every process seen in the command, with its start time (a reused pid is not the command's). */
  private readonly members = new Map<number, string>();
  /** Process groups (and sessions) a process of the command led. */
  private readonly groups = new Set<number>();
  /** dlock's own session and start time (or the section's): where, and since when, a marked process may be found. */
  private readonly self: Scope | undefined;
  /** When the tree was made, and the pid last handed out then: see lowestPid. */
  private readonly startedAt = now();
  private readonly lastPidAtStart = lastPid();

  constructor(
    private readonly root: number,
    private readonly mark?: string,
    private readonly section?: SectionScope,
  ) {
    const entry = section?.shell.pid === root ? section.shell : readEntry(root);
    if (entry) this.members.set(root, entry.start);
    if (mark === undefined) return;
    this.self = section
      ? { pid: process.pid, session: section.shell.session, start: section.since }
      : readEntry(process.pid);
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
    const pids = others.map((entry) => entry.pid);
    for (const pid of pids) kill(pid, signal);
    return pids;
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

  /** Walk /proc now: the processes of the command other than its first one that still run in its session. */
  /**
   * The last walk could not read the environment of a process in the session started since dlock
   * (gone meanwhile, or caught in an exec): one more look tells whether it carries the mark.
   */
  unread = false;

  remaining(): number[] {
    // No pid handed out since the first process, and nothing of it seen or grouped: it started nothing.
    if (this.members.size === 1 && this.groups.size === 0 && this.lowestPid() === this.root && lastPid() === this.root)
      return [];
    return this.walk()
      .others.filter((entry) => this.stays(entry))
      .map((entry) => entry.pid);
  }

  /** SIGSTOP every process of the command seen so far that still runs as the same process. */
  private freezeKnown(): void {
    for (const [pid, start] of this.members) {
      const entry = readEntry(pid);
      if (entry && entry.start === start && !entry.zombie) kill(pid, 'SIGSTOP');
    }
  }

  /** Walk /proc from the first process, every member seen before and the marked; note members and groups. */
  private walk(): { spared: Spared; others: ProcessEntry[] } {
    const table = processTable(this.lowestPid());
    // A marked process's parent may be found twice (or be a member): each process once.
    const roots = new Map<number, ProcessEntry>();
    for (const entry of [...this.stillMembers(table), ...this.marked(table)]) roots.set(entry.pid, entry);
    // Nothing of the command is left (the usual end): dlock's ancestors need not be read.
    const spared = roots.size > 0 || this.groups.size > 0 ? sparedBy(process.pid, table) : NONE_SPARED;
    const found = [...roots.values(), ...descendants(roots.keys(), table)];
    const others: ProcessEntry[] = [];
    for (const entry of found) {
      if (spared.pids.has(entry.pid)) continue;
      if (this.members.get(entry.pid) !== entry.start) this.members.set(entry.pid, entry.start);
      if (entry.pgid === entry.pid && !spared.groups.has(entry.pgid)) this.groups.add(entry.pgid);
      if (entry.pid !== this.root && !entry.zombie) others.push(entry);
    }
    return { spared, others };
  }

  /**
   * The lowest pid a process of the command can have. Pids are handed out in increasing order, so
   * every process started after the first has a higher pid than it — unless the counter wrapped
   * around since. It had not when the tree was made if the last pid handed out then was at least
   * the first's; it has since if the last one now is lower than that; and it may have if the
   * command ran long enough to hand out the whole pid space at PIDS_PER_MS (4.2 s at Linux's
   * largest pid_max, 33 ms at the usual 32768). In those cases every process is read. So a command
   * that leaves nothing behind costs a walk of the few processes started since it, not of the host.
   */
  private lowestPid(): number {
    // Only `dlock run` (a mark, no section) makes the tree as its command starts: a keeper's watched
    // shell may have run, and forked, since long before.
    const atStart = this.lastPidAtStart;
    if (this.mark === undefined || this.section || atStart === undefined || atStart < this.root) return 0;
    if (now() - this.startedAt >= pidSpace() / PIDS_PER_MS) return 0;
    const last = lastPid();
    return last !== undefined && last >= atStart ? this.root : 0;
  }

  /** Members seen before that still run as the same process. */
  private *stillMembers(table: Map<number, ProcessEntry>): Iterable<ProcessEntry> {
    for (const [pid, start] of this.members) {
      const entry = table.get(pid);
      if (entry && entry.start === start && !entry.zombie && this.stays(entry)) yield entry;
    }
  }

  /**
   * With a mark, a process stays the command's while it is in dlock's session (or the one its first
   * process leads): one that left it (`setsid -f`) and was reparented away has opted out. Without
   * one, every process seen stays.
   */
  private stays(entry: ProcessEntry): boolean {
    return !this.self || entry.session === this.self.session || entry.session === this.root;
  }

  /**
   * Processes not seen before that carry the mark, in dlock's session (or the one its first process
   * leads), started since dlock: only their environment is read, and only theirs. And the parents
   * of those there, started since dlock, that do not carry it: a subshell (`( … ) &`) of a shell
   * that was not exec'd with the mark (a section's) is found through the commands it runs.
   */
  private *marked(table: Map<number, ProcessEntry>): Iterable<ProcessEntry> {
    const { mark } = this;
    if (!this.self || mark === undefined) return;
    this.unread = false;
    for (const entry of table.values()) {
      if (!this.unseen(entry)) continue;
      const carries = carriesMark(entry.pid, mark);
      if (carries === undefined) this.unread = true;
      if (!carries) continue;
      yield entry;
      for (let parent = table.get(entry.ppid); parent && this.unseen(parent); parent = table.get(parent.ppid)) {
        yield parent;
      }
    }
  }

  /** A running process in the session, started since dlock (or the keeper), not dlock, not seen before. */
  private unseen(entry: ProcessEntry): boolean {
    const self = this.self!;
    // dlock's ancestors started before it, so only dlock itself needs leaving out here.
    if (entry.zombie || entry.pid === self.pid || this.members.get(entry.pid) === entry.start) return false;
    return this.stays(entry) && Number(entry.start) >= Number(self.start);
  }
}

/**
 * Does `pid`'s environment (as it was exec'd with) carry the lock `mark` names (carriesLock)?
 * Undefined when it could not be read, or read empty (gone, not ours, or caught in an exec).
 */
export function carriesMark(pid: number, mark: string): boolean | undefined {
  try {
    const environ = readFileSync(`/proc/${pid}/environ`);
    return environ.length === 0 ? undefined : carriesLock(environ, mark);
  } catch {
    return undefined;
  }
}

/**
 * Does `environ` carry the lock `mark` (`DLOCK_TOKEN=<token>`) names: as that entry, or among the
 * enclosing locks of its DLOCK_HELD (`… key=<token>,…`), as the command of a nested dlock of
 * another key does (an orphan of `dlock run b` under `dlock run a` is still a's)? Linear.
 */
export function carriesLock(environ: Buffer, mark: string): boolean {
  if (hasEntry(environ, mark)) return true;
  const token = `=${mark.slice(mark.indexOf('=') + 1)},`;
  const held = Buffer.from('DLOCK_HELD=');
  for (let at = environ.indexOf(held); at >= 0; at = environ.indexOf(held, at + 1)) {
    if (at !== 0 && environ[at - 1] !== 0) continue;
    const end = environ.indexOf(0, at);
    const value = environ.subarray(at + held.length, end < 0 ? environ.length : end);
    if (value.includes(token)) return true;
  }
  return false;
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

const NONE_SPARED: Spared = { pids: new Set(), groups: new Set() };

/** dlock itself and its ancestors, and their process groups: never signalled as part of a command. */
function sparedBy(self: number, table: Map<number, ProcessEntry>): Spared {
  const pids = new Set<number>();
  const groups = new Set<number>();
  // The table may start above them (CommandTree.lowestPid): then they are read one by one.
  const entryOf = (pid: number) => table.get(pid) ?? readEntry(pid);
  for (let entry = entryOf(self); entry && !pids.has(entry.pid); entry = entryOf(entry.ppid)) {
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
