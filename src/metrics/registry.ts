// The collected locks as a prom-client Registry of their own (never the global one, and no
// process metrics: dlock metrics is a short-lived reader, its own CPU and heap say nothing about
// the locks). prom-client writes the exposition format and escapes every label value.

import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { cut, printable } from '../untrusted.js';
import type { Collection, LockSample } from './collect.js';
import type { HistoryStats } from './history-stats.js';

/** Longest `key` label, in code points: a forged key name SCAN found is cut to it. */
const KEY_LABEL_MAX = 200;

const WAIT_BUCKETS = [0.01, 0.1, 1, 5, 30, 60, 300, 900, 3600, 14400];
const HOLD_BUCKETS = [1, 5, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400];

/**
 * Said in the HELP of every metric counted from a key's history: the stream keeps a key's last
 * 1000 events (docs/reference/commands.md, dlock history), so these count what it still holds.
 */
const RETAINED =
  " (counted over the key's retained history, its last 1000 events: once the stream is full, old events drop " +
  'out and the count can stay level or fall; compare with dlock_lock_history_entries)';
/** The same for what is looked up in it: a success older than the retained history is not found. */
const FOUND =
  " (looked up in the key's retained history, its last 1000 events: absent when none of them is such a release)";

/** The registry for one collection; `nowMs` is the time "seconds since the last success" counts to. */
export function buildRegistry(collection: Collection, nowMs: number): Registry {
  const registry = new Registry();
  const metric = lockMetrics(registry);
  const labels = keyLabels(collection.locks);
  collection.locks.forEach((lock, i) => {
    const labelled = { key: labels[i] };
    metric.held.set(labelled, lock.held ? 1 : 0);
    metric.holders.set(labelled, lock.holders);
    if (lock.slots !== undefined) metric.slots.set(labelled, lock.slots);
    if (lock.waiters !== undefined) metric.waiters.set(labelled, lock.waiters);
    if (lock.history) addHistory(metric, labelled, lock.history, nowMs);
  });
  new Gauge({
    name: 'dlock_metrics_locks_unreadable',
    help: 'Locks that could not be read in this collection (dlock says which on stderr)',
    registers: [registry],
  }).set(collection.unreadable.length);
  new Gauge({
    name: 'dlock_metrics_locks_omitted',
    help: 'Locks left out of this collection: more than the 1000 one run reports',
    registers: [registry],
  }).set(collection.omitted);
  return registry;
}

type Metrics = ReturnType<typeof lockMetrics>;

/** Every per-lock metric, registered in `registry`. */
function lockMetrics(registry: Registry) {
  const registers = [registry];
  const key = ['key'] as const;
  const gauge = (name: string, help: string) => new Gauge({ name, help, labelNames: key, registers });
  return {
    held: gauge('dlock_lock_held', 'Whether the lock is held: 1 held, 0 free'),
    holders: gauge('dlock_lock_holders', 'How many hold the lock now (--shared and --slots: several)'),
    slots: gauge('dlock_lock_slots', 'How many may hold the lock at once: 1, or --slots n (none for --shared)'),
    waiters: gauge('dlock_lock_waiters', 'How many wait in line for the lock (one Redis only)'),
    entries: gauge('dlock_lock_history_entries', "Entries in the key's history stream (at most 1000)"),
    oldest: gauge('dlock_lock_history_oldest_timestamp_seconds', "Server time of the key's oldest retained entry"),
    lastSuccess: gauge(
      'dlock_lock_last_success_timestamp_seconds',
      'Server time of the last release with exit status 0' + FOUND,
    ),
    sinceSuccess: gauge(
      'dlock_lock_seconds_since_success',
      "Seconds from the last release with exit status 0 to this collection (by the Redis server's clock)" + FOUND,
    ),
    acquisitions: new Counter({
      name: 'dlock_lock_acquisitions_total',
      help: 'Acquisitions' + RETAINED,
      labelNames: key,
      registers,
    }),
    turnedAway: new Counter({
      name: 'dlock_lock_turned_away_total',
      help: 'Attempts turned away: busy held or line (-n), wait (--wait ran out), done (--once-per)' + RETAINED,
      labelNames: ['key', 'reason'] as const,
      registers,
    }),
    losses: new Counter({
      name: 'dlock_lock_losses_total',
      help: 'Locks lost while held, by why: expired, forced, taken' + RETAINED,
      labelNames: ['key', 'reason'] as const,
      registers,
    }),
    forced: new Counter({
      name: 'dlock_lock_forced_total',
      help: 'Holds removed by dlock release --force' + RETAINED,
      labelNames: key,
      registers,
    }),
    releases: new Counter({
      name: 'dlock_lock_releases_total',
      help:
        'Releases by exit status class: ok (0), error (1-125), cannot_run (126, 127), signal (128+N), lost, ' +
        'none (no command), other' +
        RETAINED,
      labelNames: ['key', 'exit_class'] as const,
      registers,
    }),
    wait: histogram(registry, 'dlock_lock_wait_seconds', 'Time waited before each acquisition', WAIT_BUCKETS),
    hold: histogram(registry, 'dlock_lock_hold_seconds', 'Time held before each release', HOLD_BUCKETS),
  };
}

function addHistory(metric: Metrics, labelled: { key: string }, stats: HistoryStats, nowMs: number): void {
  metric.entries.set(labelled, stats.entries);
  if (stats.oldestMs !== undefined) metric.oldest.set(labelled, stats.oldestMs / 1000);
  if (stats.lastSuccessMs !== undefined) {
    metric.lastSuccess.set(labelled, stats.lastSuccessMs / 1000);
    metric.sinceSuccess.set(labelled, Math.max(0, nowMs - stats.lastSuccessMs) / 1000);
  }
  metric.acquisitions.inc(labelled, stats.acquisitions);
  metric.forced.inc(labelled, stats.forced);
  for (const [reason, count] of Object.entries(stats.turnedAway)) metric.turnedAway.inc({ ...labelled, reason }, count);
  for (const [reason, count] of Object.entries(stats.losses)) metric.losses.inc({ ...labelled, reason }, count);
  for (const [exitClass, count] of Object.entries(stats.releases))
    metric.releases.inc({ ...labelled, exit_class: exitClass }, count);
  metric.wait.zero(labelled);
  metric.hold.zero(labelled);
  for (const seconds of stats.waitSeconds) metric.wait.observe(labelled, seconds);
  for (const seconds of stats.holdSeconds) metric.hold.observe(labelled, seconds);
}

function histogram(registry: Registry, name: string, help: string, buckets: number[]): Histogram<'key'> {
  return new Histogram({ name, help: help + RETAINED, labelNames: ['key'], buckets, registers: [registry] });
}

/**
 * The `key` label of each lock: escaped and cut (a name SCAN found can be anything); two names
 * that cut to the same label get "#2", "#3"… so that their series stay apart.
 */
export function keyLabels(locks: LockSample[]): string[] {
  const seen = new Set<string>();
  return locks.map(({ key }) => {
    const label = cut(printable(key), KEY_LABEL_MAX);
    let unique = label;
    for (let count = 2; seen.has(unique); count++) unique = `${label}#${count}`;
    seen.add(unique);
    return unique;
  });
}
