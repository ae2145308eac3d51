// What the board shows, read from the store in one pass: status's listing (the same JSON as
// `dlock status --json`), then each held lock as `status KEY --json` shows it with the newest
// events of its history, and a named lock's page. Every field stays as the store gave it (cut by
// the backend); the page writes them with textContent only.

import type { ConnectionConfig } from '../config/index.js';
import {
  type Backend,
  type DoneMark,
  failureText,
  openBackend,
  storeNow,
  unavailable,
  unreadable,
} from '../backend/index.js';
import { keyObject, listObjects } from '../views/status-text.js';
import { historyJson } from '../views/history-text.js';
import { cut } from '../untrusted.js';
import { DlockError } from '../errors.js';

/** Locks shown with their line and history: each costs two reads, so a refresh costs at most twice this many. */
export const BOARD_MAX_LOCKS = 200;
/** Events of each lock's history on the board, and on a lock's own page. */
export const BOARD_EVENTS = 5;
export const LOCK_PAGE_EVENTS = 20;

/** One lock on the board: status KEY --json's object, its newest events (history --json's), its done mark. */
export type BoardLock = ReturnType<typeof keyObject> & {
  history: object[] | null;
  history_error?: string;
  done?: ReturnType<typeof publicDone>;
  done_error?: string;
};

export interface Board {
  /** `dlock status --json` of the same read. */
  listing: ReturnType<typeof listObjects>;
  locks: BoardLock[];
  /** Locks whose own read failed after the listing found them, and why. */
  failed: { key: string; error: string }[];
  /** Held locks past BOARD_MAX_LOCKS, listed but not shown in detail. */
  omitted: number;
  /** The store's clock at the read (ms since the epoch): what the page ages every time from. */
  storeMs: number;
}

/**
 * Read the whole board: the listing, then each of `named` (shown even when free, as dlock metrics' keys) and each
 * held lock, at most BOARD_MAX_LOCKS in all, with its newest events and done mark.
 */
export async function readBoard(config: ConnectionConfig, named: string[]): Promise<Board> {
  const backend = await openBackend(config);
  try {
    const { held, unreadable } = await backend.list();
    const unread = new Set(unreadable.map((lock) => lock.key));
    const keys = [...new Set([...named, ...held.map((lock) => lock.key)])].filter((key) => !unread.has(key));
    const locks: BoardLock[] = [];
    // Locks the listing read but their own read could not (a member failing since): shown as unreadable.
    const failed: { key: string; error: string }[] = [];
    for (const key of keys.slice(0, BOARD_MAX_LOCKS)) {
      const lock = await readLock(backend, key, BOARD_EVENTS).catch((error: unknown) => {
        if (!(error instanceof DlockError)) throw error;
        failed.push({ key: cut(key), error: error.message });
      });
      if (lock) locks.push(lock.lock);
    }
    const clock = held.find((lock) => lock.clock)?.clock;
    return {
      listing: listObjects(held, unreadable),
      locks,
      failed,
      omitted: Math.max(0, keys.length - BOARD_MAX_LOCKS),
      storeMs: storeNow(clock),
    };
  } finally {
    backend.close();
  }
}

/** One lock, as `status KEY --json` shows it, with its newest `events` (a lock's own page, /api/locks/<name>). */
export async function readOneLock(
  config: ConnectionConfig,
  key: string,
): Promise<{ lock: BoardLock; storeMs: number }> {
  const backend = await openBackend(config);
  try {
    return await readLock(backend, key, LOCK_PAGE_EVENTS);
  } finally {
    backend.close();
  }
}

async function readLock(backend: Backend, key: string, events: number): Promise<{ lock: BoardLock; storeMs: number }> {
  const handle = backend.lock(key);
  const read = await handle.read();
  const { caps } = backend;
  const failures = read.members.flatMap((member) => (member.failure ? [member.failure] : []));
  // As status KEY: one member that cannot tell is an error; a quorum that cannot tell is shown (held null).
  if (read.verdict === 'unknown' && caps.total === 1) {
    if (failures.length > 0 && failures.every((f) => f.permanent && !f.reached)) throw unreadable(key, failures);
    throw unavailable(caps, failures);
  }
  const history = await handle.history(events);
  const done = await handle.doneMark();
  const lock: BoardLock = {
    ...keyObject(key, read, caps),
    // A listed name can be anything (a forged hash): cut for showing, as status's listing does.
    key: cut(key),
    history: history && 'events' in history ? historyJson(history.events) : null,
    ...(history && 'failure' in history ? { history_error: failureText(history.failure) } : {}),
    ...(done && 'done' in done && done.done ? { done: publicDone(done.done) } : {}),
    ...(done && 'failure' in done ? { done_error: failureText(done.failure) } : {}),
  };
  return { lock, storeMs: storeNow(read.clock) };
}

/** A --once-per done mark as the board shows it: who succeeded, when, until when the key is done (null: no end). */
function publicDone(mark: DoneMark) {
  return {
    host: mark.host,
    pid: mark.pid,
    cmd: mark.cmd,
    fence: mark.fence,
    started_ms: mark.startedMs ?? null,
    finished_ms: mark.finishedMs ?? null,
    until_ms: mark.untilMs ?? null,
  };
}
