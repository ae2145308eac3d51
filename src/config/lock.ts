// The lock options run and acquire share: lease, wait, conflict code, loss, replicas, holder kind, --once-per,
// the order in line (--priority, --supersede).

import { formatDuration } from '../duration.js';
import { badOption, UsageError } from '../errors.js';
import {
  type Capabilities,
  type HolderKind,
  type HoldMode,
  type KeyOptions,
  KINDS,
  MAX_SLOTS,
  MODES,
  PRIORITY_MAX,
  refusal,
} from '../backend/index.js';
import { jobBounds } from './bounds.js';
import { stopSignal } from './signal.js';
import type { ConnectionConfig } from './connection.js';
import type { MonitorConfig } from './monitor.js';
import {
  DEFAULTS,
  duration,
  integer,
  MIN_TTL_MS,
  ON_LOST,
  oneOf,
  positiveDuration,
  type Env,
  type OnLost,
  type RawOptions,
} from './options.js';

/** dlock run: what it holds, how, and what it runs under the lock. */
export interface RunConfig extends ConnectionConfig {
  key: string;
  command: string[];
  ttlMs: number;
  /** undefined: wait forever; 0: --no-wait. */
  waitMs: number | undefined;
  conflictExitCode: number;
  onLost: OnLost;
  killAfterMs: number;
  /** --signal: what stops the command for --on-lost term, --max-hold and --heartbeat (SIGKILL follows). */
  stopSignal: NodeJS.Signals;
  syncReplicas: number;
  /** The holder metadata's `cmd`: the command line, truncated, passwords masked; '' with --no-cmd-metadata. */
  holderCmd: string;
  /** Alone (default), --shared, or --slots n (n > 1). */
  mode: HoldMode;
  /** --slots was given (even --slots 1): the command gets DLOCK_SLOT. */
  slotted: boolean;
  /**
   * What the key's options ask of each attempt, carried untouched to the backend: --once-per's window
   * in ms (0: none; after an exit 0 the key is done until that run's start + this).
   */
  keyOptions: KeyOptions;
  /** --max-hold in ms (undefined: none): then the command is stopped and the lock released, exit 124. */
  maxHoldMs: number | undefined;
  /** --heartbeat in ms (undefined: none): that long without a `dlock heartbeat` stops it the same way. */
  heartbeatMs: number | undefined;
  /** --ping / --on-event; undefined: neither (the monitor code is not even loaded). */
  monitor: MonitorConfig | undefined;
  /** --reason (or DLOCK_REASON): why it is held, stored with the holder and its place in line. */
  reason?: string;
}

/** --ttl, else DLOCK_TTL, else the default: at least MIN_TTL_MS. */
export function leaseTtl(raw: RawOptions, env: Env): number {
  const ttlOption = raw.ttl !== undefined ? '--ttl' : 'DLOCK_TTL';
  const ttlText = raw.ttl ?? env.DLOCK_TTL ?? DEFAULTS.ttl;
  const ttlMs = duration(ttlOption, ttlText);
  if (ttlMs < MIN_TTL_MS) throw badOption(ttlOption, ttlText, `must be at least ${MIN_TTL_MS}ms`);
  return ttlMs;
}

/** The lock options run and acquire share: lease, wait, conflict code, loss, replicas, the key's options. */
export function lockOptions(
  raw: RawOptions,
  env: Env,
  can: Capabilities,
): Pick<
  RunConfig,
  | 'ttlMs'
  | 'waitMs'
  | 'conflictExitCode'
  | 'onLost'
  | 'killAfterMs'
  | 'stopSignal'
  | 'syncReplicas'
  | 'mode'
  | 'slotted'
  | 'maxHoldMs'
  | 'heartbeatMs'
  | 'keyOptions'
> {
  const ttlMs = leaseTtl(raw, env);

  let waitMs: number | undefined;
  if (raw.wait === false) {
    waitMs = 0;
  } else if (typeof raw.wait === 'string') {
    waitMs = duration('--wait', raw.wait);
  } else if (env.DLOCK_WAIT !== undefined && env.DLOCK_WAIT !== '') {
    waitMs = duration('DLOCK_WAIT', env.DLOCK_WAIT);
  }

  const killAfterMs = graceMs(raw.killAfter, ttlMs, raw.signal);
  const mode = holdMode(raw, can);
  return {
    ttlMs,
    waitMs,
    conflictExitCode: integer(
      '--conflict-exit-code',
      raw.conflictExitCode ?? String(DEFAULTS.conflictExitCode),
      0,
      255,
    ),
    onLost: oneOf('--on-lost', raw.onLost ?? DEFAULTS.onLost, ON_LOST),
    killAfterMs,
    stopSignal: stopSignal(raw.signal),
    syncReplicas: syncReplicas(raw.syncReplicas, can),
    mode,
    slotted: raw.slots !== undefined,
    ...jobBounds(raw, env),
    keyOptions: { oncePerMs: oncePer(raw.oncePer, can), ...lineOrder(raw, waitMs, can) },
  };
}

/**
 * --kill-after: the grace must fit inside the lease, or a command that ignores SIGTERM after a
 * lost lock would outlive its expiry. The default is capped at ttl/3; a given value above it is
 * refused, as a --max-hold shorter than the grace is (it was capped without a word).
 */
function graceMs(given: string | undefined, ttlMs: number, signal: string | undefined): number {
  const capMs = Math.floor(ttlMs / 3);
  if (given === undefined) return Math.min(duration('--kill-after', DEFAULTS.killAfter), capMs);
  const ms = duration('--kill-after', given);
  if (ms > capMs) {
    const third = `${formatDuration(capMs)} of ${formatDuration(ttlMs)}`;
    const ignoring = `a command that ignores ${stopSignal(signal)} is killed before its lease ends`;
    const why = `must be at most a third of the lease (${third}), so that ${ignoring}`;
    throw badOption('--kill-after', given, why);
  }
  return ms;
}

/**
 * --shared, --slots n, or alone: the kinds' options as MODES declares them (their numbers read in
 * the table's order, then the conflicts, the last kind's first). A kind other than exclusive needs
 * a store whose capabilities hold it (in practice one Redis: a server, Sentinel or Cluster); the
 * store that cannot says why (Capabilities.refusals).
 */
export function holdMode(raw: Pick<RawOptions, HolderKind>, can: Capabilities): HoldMode {
  const given = KINDS.flatMap((kind) => {
    const value = raw[kind];
    if (value === undefined || value === false) return [];
    const n = MODES[kind].flag.argument ? integer(`--${kind}`, String(value), 1, MAX_SLOTS) : 1;
    return [{ kind, n }];
  });
  for (const [at, later] of [...given.entries()].reverse()) {
    for (const earlier of given.slice(0, at).reverse()) {
      const conflict = MODES[later.kind].together(earlier.kind, later.n);
      if (conflict) throw new UsageError(conflict);
    }
  }
  // After the conflicts, the last given kind is the one asked for (--exclusive --slots 1: slots' 1).
  const asked = given.at(-1);
  const alone = !asked || (asked.n === 1 && MODES[asked.kind].flag.argument);
  const mode: HoldMode = alone ? { kind: 'exclusive' } : MODES[asked.kind].mode(asked.n);
  if (!can.kinds.includes(mode.kind)) {
    throw new UsageError(`--${mode.kind} ${refusal(can, 'kinds')}`);
  }
  return mode;
}

/** --sync-replicas n: 0 (the default) everywhere; more only where the store can wait for replicas. */
export function syncReplicas(value: string | undefined, can: Capabilities): number {
  const replicas = integer('--sync-replicas', value ?? '0', 0, 1_000);
  if (replicas > 0 && !can.syncReplicas) throw new UsageError(`--sync-replicas ${refusal(can, 'syncReplicas')}`);
  return replicas;
}

/**
 * --priority n (−PRIORITY_MAX … PRIORITY_MAX) and --supersede: the order of the line, where the store keeps one
 * that can (--priority: one Redis; --supersede: one Redis or etcd). --supersede waits in line, so never with -n.
 */
export function lineOrder(
  raw: Pick<RawOptions, 'priority' | 'supersede'>,
  waitMs: number | undefined,
  can: Capabilities,
): Pick<KeyOptions, 'priority' | 'supersede'> {
  if (raw.priority === undefined && !raw.supersede) return {};
  const priority = raw.priority === undefined ? 0 : signedInteger('--priority', raw.priority, PRIORITY_MAX);
  if (raw.supersede && waitMs === 0) {
    throw new UsageError(
      '--supersede takes the place of older waiters in line: it cannot go with -n (--no-wait) or --wait 0',
    );
  }
  if (raw.priority !== undefined && !can.priority) throw new UsageError(`--priority ${refusal(can, 'priority')}`);
  if (raw.supersede && !can.supersede) throw new UsageError(`--supersede ${refusal(can, 'supersede')}`);
  return { ...(raw.priority === undefined ? {} : { priority }), ...(raw.supersede ? { supersede: true } : {}) };
}

/** An integer from −max to max, written in decimal ("-5", "+5", "5"). */
function signedInteger(option: string, value: string, max: number): number {
  const n = Number(value.trim());
  if (!/^[+-]?\d+$/.test(value.trim()) || Math.abs(n) > max) {
    throw badOption(option, value, `expected an integer from -${max} to ${max}`);
  }
  return n;
}

/**
 * --once-per: a window of at least the TTL's minimum, where the store keeps a done mark (one Redis;
 * the store that cannot says why: with Redlock, a release may reach only some instances).
 */
export function oncePer(value: string | undefined, can: Capabilities): number {
  if (value === undefined) return 0;
  const ms = positiveDuration('--once-per', value);
  if (ms < MIN_TTL_MS) throw badOption('--once-per', value, `must be at least ${MIN_TTL_MS}ms`);
  if (!can.oncePer) {
    throw new UsageError(`--once-per ${refusal(can, 'oncePer')}`);
  }
  return ms;
}
