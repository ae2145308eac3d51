// The collected locks as a prom-client Registry of their own (never the global one, and no
// process metrics: dlock metrics is a short-lived reader, its own CPU and heap say nothing about
// the locks). prom-client writes the exposition format and escapes every label value.

import { Counter, Gauge, Registry, type Histogram } from 'prom-client';
import type { Observed, Totals } from '../backend/index.js';
import { cut, printable } from '../untrusted.js';
import type { Collection, LockSample } from './collect.js';
import type { HistoryStats } from './history-stats.js';

/** Longest `key` label, in code points: a forged key name SCAN found is cut to it. */
const KEY_LABEL_MAX = 200;

/**
 * Said in the HELP of every counter: they are the key's totals (src/backends/redis/lock/lua/totals.lua), kept by
 * the scripts that do each counted thing, so they only go up until the key's data is deleted.
 */
const TOTAL = " (counted for the life of the key's data on the server: only deleting it, as FLUSHALL does, resets it)";

/**
 * Where the collection went: `prefix` (on every series), and the file's name with --textfile (on
 * the dlock_metrics_* series: two files must not repeat a series).
 */
export interface Origin {
  prefix: string;
  file?: string;
}

/**
 * The registry for one collection; `nowMs` is the server time the age of the last success counts
 * to, `collectedMs` this host's time of the collection.
 */
export function buildRegistry(collection: Collection, nowMs: number, collectedMs: number, origin: Origin): Registry {
  const registry = new Registry();
  const metric = lockMetrics(registry);
  const labels = keyLabels(collection.locks);
  collection.locks.forEach((lock, i) => {
    // Every per-lock series says its prefix: one key name under two prefixes is two locks.
    const labelled = { key: labels[i]!, prefix: origin.prefix };
    metric.held.set(labelled, lock.held ? 1 : 0);
    metric.holders.set(labelled, lock.holders);
    metric.closed.set(labelled, lock.closed);
    if (lock.slots !== undefined) metric.slots.set(labelled, lock.slots);
    if (lock.waiters !== undefined) metric.waiters.set(labelled, lock.waiters);
    if (lock.history) addHistory(metric, labelled, lock.history);
    const lastSuccessMs = Math.max(lock.totals?.lastSuccessMs ?? 0, lock.history?.lastSuccessMs ?? 0);
    if (lastSuccessMs > 0) {
      metric.lastSuccess.set(labelled, lastSuccessMs / 1000);
      metric.successAge.set(labelled, Math.max(0, nowMs - lastSuccessMs) / 1000);
    }
    if (lock.totals) addTotals(metric, labelled, lock.totals);
  });
  const collected = collectionMetrics(registry, origin);
  collected.unreadable.set(collection.unreadable.length);
  collected.invalid.set(collection.locks.reduce((sum, lock) => sum + (lock.totals?.invalid.length ?? 0), 0));
  collected.omitted.set(collection.omitted);
  collected.success.set(1);
  collected.timestamp.set(collectedMs / 1000);
  return registry;
}

/**
 * What dlock says when the collection failed (Redis unreachable): only the dlock_metrics_* series,
 * `dlock_metrics_collect_success` 0. Written where it can be (--textfile, --listen, --push), so
 * that a failure is a value to alert on, not an old file's values left in place.
 */
export function failedRegistry(collectedMs: number, origin: Origin): Registry {
  const registry = new Registry();
  const collected = collectionMetrics(registry, origin);
  collected.success.set(0);
  collected.timestamp.set(collectedMs / 1000);
  return registry;
}

/** The dlock_metrics_* series, labelled with where the collection went. */
function collectionMetrics(registry: Registry, origin: Origin) {
  const labels = { prefix: origin.prefix, ...(origin.file === undefined ? {} : { file: origin.file }) };
  const gauge = (name: string, help: string) => {
    const made = new Gauge({ name, help, labelNames: Object.keys(labels), registers: [registry] });
    return { set: (value: number) => made.set(labels, value) };
  };
  return {
    success: gauge('dlock_metrics_collect_success', 'Whether this collection read the store: 1 it did, 0 it failed'),
    timestamp: gauge('dlock_metrics_collect_timestamp_seconds', 'When this collection was made (Unix time)'),
    unreadable: gauge(
      'dlock_metrics_locks_unreadable',
      'Locks that could not be read in this collection (dlock says which on stderr)',
    ),
    omitted: gauge(
      'dlock_metrics_locks_omitted',
      'Locks left out of this collection: more than the 1000 one run reports',
    ),
    invalid: gauge(
      'dlock_metrics_counts_invalid',
      "Counts in the keys' totals that are not whole numbers (forged): their series are left out (dlock says which)",
    ),
  };
}

type Metrics = ReturnType<typeof lockMetrics>;

/** Every per-lock metric, registered in `registry`. */
function lockMetrics(registry: Registry) {
  const registers = [registry];
  const key = ['key', 'prefix'] as const;
  const gauge = (name: string, help: string) => new Gauge({ name, help, labelNames: key, registers });
  return {
    held: gauge('dlock_lock_held', 'Whether the lock is held: 1 held, 0 free (or only closed by release --force)'),
    holders: gauge('dlock_lock_holders', 'How many hold the lock now (--shared and --slots: several)'),
    closed: gauge(
      'dlock_lock_closed',
      'Holds closed by dlock release --force: the key admits nobody until their lease runs out (0: none)',
    ),
    slots: gauge('dlock_lock_slots', 'How many may hold the lock at once: 1, or --slots n (none for --shared)'),
    waiters: gauge(
      'dlock_lock_waiters',
      'How many wait in line for the lock (one Redis, or etcd; not a Redlock quorum)',
    ),
    entries: gauge('dlock_lock_history_entries', "Entries in the key's history stream (at most 1000)"),
    oldest: gauge('dlock_lock_history_oldest_timestamp_seconds', "Server time of the key's oldest retained entry"),
    lastSuccess: gauge(
      'dlock_lock_last_success_timestamp_seconds',
      'Server time of the last release with exit status 0' + TOTAL,
    ),
    successAge: gauge(
      'dlock_lock_last_success_age_seconds',
      "Seconds from the last release with exit status 0 to this collection (by the Redis server's clock)",
    ),
    acquisitions: new Counter({
      name: 'dlock_lock_acquisitions_total',
      help: 'Acquisitions' + TOTAL,
      labelNames: key,
      registers,
    }),
    turnedAway: new Counter({
      name: 'dlock_lock_turned_away_total',
      help:
        'Attempts turned away: held or line (-n), wait (--wait ran out), done (--once-per), ' +
        'superseded (--supersede), other' +
        TOTAL,
      labelNames: ['key', 'prefix', 'reason'] as const,
      registers,
    }),
    losses: new Counter({
      name: 'dlock_lock_losses_total',
      help: 'Locks lost while held, by why: expired, forced, taken, other' + TOTAL,
      labelNames: ['key', 'prefix', 'reason'] as const,
      registers,
    }),
    forced: new Counter({
      name: 'dlock_lock_forced_total',
      help: 'Holds removed by dlock release --force' + TOTAL,
      labelNames: key,
      registers,
    }),
    releases: new Counter({
      name: 'dlock_lock_releases_total',
      help:
        'Releases by exit status class: ok (0), error (1-125), cannot_run (126, 127), signal (128+N), lost, ' +
        'unknown (a section released without --exit-status), none (no command), other' +
        TOTAL,
      labelNames: ['key', 'prefix', 'exit_class'] as const,
      registers,
    }),
    wait: countedHistogram(registry, 'dlock_lock_wait_seconds', 'Time waited before each acquisition' + TOTAL),
    hold: countedHistogram(registry, 'dlock_lock_hold_seconds', 'Time held before each release' + TOTAL),
  };
}

type Labelled = { key: string; prefix: string };

function addHistory(metric: Metrics, labelled: Labelled, stats: HistoryStats): void {
  metric.entries.set(labelled, stats.entries);
  if (stats.oldestMs !== undefined) metric.oldest.set(labelled, stats.oldestMs / 1000);
}

/** The totals' series; a count that is not a whole number (forged) has none: unknown, never 0. */
function addTotals(metric: Metrics, labelled: Labelled, totals: Totals): void {
  if (totals.acquisitions !== undefined) metric.acquisitions.inc(labelled, totals.acquisitions);
  if (totals.forced !== undefined) metric.forced.inc(labelled, totals.forced);
  for (const [reason, count] of Object.entries(totals.turnedAway))
    if (count !== undefined) metric.turnedAway.inc({ ...labelled, reason }, count);
  for (const [reason, count] of Object.entries(totals.losses))
    if (count !== undefined) metric.losses.inc({ ...labelled, reason }, count);
  for (const [exitClass, count] of Object.entries(totals.releases))
    if (count !== undefined) metric.releases.inc({ ...labelled, exit_class: exitClass }, count);
  if (totals.wait) metric.wait.add(labelled, totals.wait);
  if (totals.hold) metric.hold.add(labelled, totals.hold);
}

/**
 * A histogram whose buckets were counted elsewhere (the totals hash: prom-client's own Histogram
 * only takes observations one by one). Written as prom-client writes one: `_bucket{le,key}`
 * cumulative up to +Inf, `_sum`, `_count`. Forged counts are made consistent: each bucket at least
 * the one before, the count at least the last bucket.
 */
function countedHistogram(registry: Registry, name: string, help: string) {
  const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
  const metric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get: async () => ({ name, help, type: 'histogram', aggregator: 'sum', values }),
    reset: () => void values.splice(0),
  };
  registry.registerMetric(metric as unknown as Histogram);
  return {
    add(labelled: Labelled, observed: Observed): void {
      let running = 0;
      for (const [boundMs, count] of observed.buckets) {
        running = Math.max(running, count);
        values.push({ metricName: `${name}_bucket`, labels: { le: boundMs / 1000, ...labelled }, value: running });
      }
      const count = Math.max(running, observed.count);
      values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', ...labelled }, value: count });
      values.push({ metricName: `${name}_sum`, labels: { ...labelled }, value: observed.sumMs / 1000 });
      values.push({ metricName: `${name}_count`, labels: { ...labelled }, value: count });
    },
  };
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
