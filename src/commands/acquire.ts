// dlock acquire: take the lock without a command and print the section's variables (flock's
// fd mode, etcdctl lock without a command). With a keeper (the default) the lock is taken by a
// detached keeper process started here, which renews it afterwards (../keeper/keeper.ts);
// this process relays its answer and exits as soon as the lock is held. --no-keeper takes it
// here and leaves it to expire unless `dlock renew` extends it.

import { spawn } from 'node:child_process';
import { fstatSync, writeSync } from 'node:fs';
import { constants as os } from 'node:os';
import { SignalRelay } from '../child/signal-relay.js';
import type { AcquireConfig } from '../config/index.js';
import { badOption, DlockError, EXIT } from '../errors.js';
import { Hold } from '../hold/hold.js';
import { Logger } from '../log.js';
import type { LockSet } from '../lockset/lockset.js';
import { openLockSet } from '../lockset/open.js';
import { disconnectAll } from '../redis/client.js';
import { formatVariables } from '../hold/variables.js';
import {
  ACK,
  errorFromReport,
  KEEPER_COMMAND,
  KEEPER_ENV,
  REPORT_FD,
  type KeeperReport,
  type KeeperRequest,
} from '../keeper/protocol.js';
import { isRunning } from '../keeper/runtime.js';
import { isHeldBy } from '../hold/reentrant.js';
import { selfCommand } from '../keeper/self.js';

export async function acquire(config: AcquireConfig, argv: string[]): Promise<number> {
  if (await heldByCaller(config)) return 0;
  if (!config.keeper) return acquireWithoutKeeper(config);
  const watchPid = config.watchPid ?? process.ppid;
  if (!isRunning(watchPid)) throw badOption('--pid', String(watchPid), 'no such process');
  const request: KeeperRequest = { argv, watchPid, stderr: !stderrIsStdout() };
  const { file, args } = selfCommand();
  const keeper = spawn(file, [...args, KEEPER_COMMAND], {
    detached: true,
    // Never the caller's stdout: `$(dlock acquire ...)` ends when this process exits.
    stdio: ['pipe', 'ignore', request.stderr ? 'inherit' : 'ignore', 'pipe'],
    env: { ...process.env, [KEEPER_ENV]: JSON.stringify(request) },
  });
  keeper.on('error', () => {});
  keeper.stdin!.on('error', () => {});
  const exited = new Promise<void>((resolve) => keeper.once('exit', () => resolve()).once('error', () => resolve()));
  const signals = new SignalRelay();
  // Ctrl-C while waiting: the keeper (in a session of its own) stops waiting and says so.
  signals.interrupted.addEventListener('abort', () => keeper.kill('SIGTERM'), { once: true });
  try {
    const report = await readReport(keeper.stdio[REPORT_FD] as NodeJS.ReadableStream);
    if (report?.kind === 'held') {
      const slot = report.slot === undefined ? {} : { DLOCK_SLOT: String(report.slot) };
      const written = writeStdout(
        formatVariables(
          {
            DLOCK_KEY: report.key,
            DLOCK_TOKEN: report.token,
            DLOCK_FENCING_TOKEN: report.fence,
            DLOCK_TTL_MS: String(report.ttl_ms),
            ...slot,
          },
          config.format,
        ),
      );
      // Unacknowledged, the keeper releases the lock: nobody could have.
      if (!written)
        throw new DlockError(`could not write the variables to stdout; ${config.key} was released`, EXIT.internal);
      keeper.stdin!.end(ACK);
      keeper.unref();
      return 0;
    }
    // Not held: exit only once the keeper has (nothing is left running).
    keeper.stdin!.end();
    await exited;
    if (report?.kind === 'failed') throw errorFromReport(report);
    if (report?.kind === 'interrupted')
      return 128 + (os.signals[(signals.interrupted.reason ?? report.signal ?? 'SIGTERM') as NodeJS.Signals] ?? 0);
    throw new Error('the keeper process exited before it reported');
  } finally {
    signals.dispose();
    keeper.stdin!.end();
  }
}

/** Take the lock here, print, and leave it held until its lease runs out. */
async function acquireWithoutKeeper(config: AcquireConfig): Promise<number> {
  const log = new Logger(config.verbosity, config.logFormat);
  const signals = new SignalRelay();
  let set: LockSet | undefined;
  try {
    set = await openLockSet(config, config.key, config.ttlMs, undefined, config.mode);
    const hold = await Hold.acquire(set, config, log, signals.interrupted);
    if (!hold) return 128 + (os.signals[signals.interrupted.reason as NodeJS.Signals] ?? 0);
    await hold.detach();
    const granted = hold.slotVariable(config.slotted);
    const slot = granted === undefined ? {} : { DLOCK_SLOT: String(granted) };
    if (
      !writeStdout(
        formatVariables(
          {
            DLOCK_KEY: config.key,
            DLOCK_TOKEN: hold.owner,
            DLOCK_FENCING_TOKEN: hold.fence,
            DLOCK_TTL_MS: String(hold.ttlMs),
            ...slot,
          },
          config.format,
        ),
      )
    ) {
      await hold.release();
      throw new DlockError(`could not write the variables to stdout; ${config.key} was released`, EXIT.internal);
    }
    return 0;
  } finally {
    signals.dispose();
    if (set) disconnectAll(set.instances);
  }
}

/** The one JSON line the keeper writes on its descriptor 3; undefined if it exited without one. */
function readReport(stream: NodeJS.ReadableStream): Promise<KeeperReport | undefined> {
  return new Promise((resolve) => {
    let text = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end >= 0) resolve(JSON.parse(text.slice(0, end)) as KeeperReport);
    });
    stream.once('end', () => resolve(undefined));
    stream.once('error', () => resolve(undefined));
  });
}

/** All of `text` on stdout now, or false. */
function writeStdout(text: string): boolean {
  const bytes = Buffer.from(text);
  try {
    for (let done = 0; done < bytes.length;) done += writeSync(1, bytes, done);
    return true;
  } catch {
    return false;
  }
}

/** stderr is the very pipe or socket stdout is (`$(dlock acquire ... 2>&1)`): the keeper must not hold it open. */
function stderrIsStdout(): boolean {
  try {
    const [out, err] = [fstatSync(1), fstatSync(2)];
    return out.dev === err.dev && out.ino === err.ino && (out.isFIFO() || out.isSocket());
  } catch {
    return false;
  }
}

/**
 * Inside a section (or a `dlock run`) that holds this key already, with the same Redis: print
 * its variables again and take nothing (as a nested `dlock run` runs under its parent's lock).
 */
async function heldByCaller(config: AcquireConfig): Promise<boolean> {
  const env = process.env;
  if (env.DLOCK_KEY !== config.key || !env.DLOCK_TOKEN || !env.DLOCK_FENCING_TOKEN) return false;
  const set = await openLockSet(config, config.key, config.ttlMs, env.DLOCK_TOKEN, config.mode);
  try {
    const nested = { key: config.key, command: 'acquire', slot: env.DLOCK_SLOT } as const;
    if (!(await isHeldBy(set, env.DLOCK_TOKEN, nested))) return false;
  } finally {
    disconnectAll(set.instances);
  }
  const log = new Logger(config.verbosity, config.logFormat);
  log.event(
    'acquired',
    { key: config.key, fence: env.DLOCK_FENCING_TOKEN, reentrant: true },
    `${config.key} is already held by the caller; printing its variables`,
  );
  const slot = env.DLOCK_SLOT ? { DLOCK_SLOT: env.DLOCK_SLOT } : {};
  const ttl = env.DLOCK_TTL_MS ?? String(config.ttlMs);
  if (
    !writeStdout(
      formatVariables(
        {
          DLOCK_KEY: config.key,
          DLOCK_TOKEN: env.DLOCK_TOKEN,
          DLOCK_FENCING_TOKEN: env.DLOCK_FENCING_TOKEN,
          DLOCK_TTL_MS: ttl,
          ...slot,
        },
        config.format,
      ),
    )
  ) {
    throw new DlockError('could not write the variables to stdout', EXIT.internal);
  }
  return true;
}
