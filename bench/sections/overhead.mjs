// 1. Overhead: wall time (spawn to exit) of `dlock run k -- true` and its peers, interleaved
// round-robin (rotating the order each round) so machine drift hits every command alike. One
// row gives the command 1 MB of arguments: every argument is masked and checked at start-up,
// which must take time linear in their length (a backtracking regex once took minutes here).
// `dlock heartbeat` (as a --heartbeat job runs it, often) is timed beside them: the npm build
// answers it in bin/dlock's sh, the binary before the rest of dlock loads (target: ≤ 10 ms; an
// empty program compiled by bun the same way is timed beside it: the runtime's own start).
// Rows with --ping to a local server give the cost of the pings (/start, then the final one,
// waited for at exit), as a ratio to the same run without them.
// Floors (issue 32), timed in the same rounds: what each runtime can do at best. For the binary,
// programs compiled with Bun as it is (bench/lib/floors.mjs): a hello-world, a raw socket (SET NX
// PX, spawn `true`, DEL; no library) and the same with ioredis; for the npm build, `node -e 0`.
// Node running that ioredis script bundled by esbuild is a peer, not a floor (it came out slower than
// dlock's own npm run): a row of its own, with no dlock ratio to it. The "1 floors" rows give each
// dlock row's ratio to its floor, and the issue's goals (pass/MISS, counted apart from the targets).
// One verdict per ratio: where a goal and an older target judge the same ratio, the goal's row shows
// both limits ("goal ≤ 1.3× (was ≤ 1.45×)") and one result, and the overhead rows drop that target.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEtcd } from '../lib/etcd.mjs';
import { buildFloors, bundleForNode } from '../lib/floors.mjs';
import { startPingServer } from '../lib/ping-server.mjs';
import { cleanEnv, timed } from '../lib/proc.mjs';
import { atMost, pick } from '../lib/report.mjs';
import { ratio, summarize } from '../lib/stats.mjs';

export async function overhead({ plan, redis, dlock, binary, which, baseline }) {
  const lockDir = mkdtempSync(join(tmpdir(), 'dlock-bench-flock-'));
  const etcdSkip = which('etcdctl') && which('etcd') ? undefined : 'etcd/etcdctl not installed';
  const started = etcdSkip ? undefined : await startEtcd();
  const etcd = started?.endpoint ? started : undefined;
  const etcdNote = etcdSkip ?? started?.failed;
  const pings = await startPingServer();
  const run = (command, ...args) =>
    timed(command, ['run', '--redis', redis.url, 'bench-overhead', '--', 'true', ...args]);
  // The same run on the throwaway etcd (issue 34), beside `etcdctl lock` on it. These rows may fail
  // (a build without the etcd backend): a failed one is a row that says so, never a crashed bench.
  const runOnEtcd = (command) =>
    timed(command, ['run', '--redis', `etcd://${etcd.endpoint}`, 'bench-overhead', '--', 'true']);
  const runPinged = (command) =>
    timed(command, ['run', '--redis', redis.url, '--ping', pings.url, 'bench-overhead', '--', 'true']);
  // Linux takes at most 128 kB in one argument (MAX_ARG_STRLEN): 1 MB is ten of 100 kB.
  const megabyte = Array.from({ length: 10 }, () => 'a'.repeat(100_000));
  // What a command under `dlock run --heartbeat` has: its lock's variables and its heartbeat file.
  const heartbeatFile = join(lockDir, 'heartbeat-bench');
  writeFileSync(heartbeatFile, '', { mode: 0o600 });
  const beatEnv = cleanEnv({ DLOCK_KEY: 'bench', DLOCK_TOKEN: '0'.repeat(32), DLOCK_HEARTBEAT_FILE: heartbeatFile });
  const beat = (command) => timed(command, ['heartbeat'], { env: beatEnv });
  // The floor of the binary's rows: an empty program compiled the same way (the Bun runtime's start).
  const floor = binary ? bunFloor(lockDir) : undefined;
  const floors = buildFloors(lockDir, ['hello', 'raw-socket', 'ioredis']);
  // A peer for the npm build (not its floor: node -e 0 is): the ioredis floor script, bundled.
  const nodePeer = await bundleForNode(lockDir, 'ioredis');
  const floorKey = 'bench-overhead-floor';
  const floorArgs = [String(redis.port), floorKey];
  const commands = [
    { id: 'node', label: 'node -e 0', run: () => timed(process.execPath, ['-e', '0']) },
    { id: 'version', label: 'dlock --version (npm)', run: () => timed(dlock, ['--version']) },
    { id: 'dlock', label: 'dlock run k -- true (npm)', run: () => run(dlock) },
    { id: 'longArgs', label: 'dlock run k -- true <1 MB of arguments> (npm)', run: () => run(dlock, ...megabyte) },
    { id: 'heartbeat', label: 'dlock heartbeat (npm)', run: () => beat(dlock) },
    { id: 'ping', label: 'dlock run --ping <local> k -- true (npm)', run: () => runPinged(dlock) },
    binary && { id: 'binaryVersion', label: 'dlock-linux-x64 --version', run: () => timed(binary, ['--version']) },
    floor && { id: 'bunFloor', label: 'an empty program compiled by bun (the floor)', run: () => timed(floor, []) },
    floors.built.hello && {
      id: 'bunHello',
      label: 'floor: a bun-compiled hello-world',
      run: () => timed(floors.built.hello, []),
    },
    floors.built['raw-socket'] && {
      id: 'bunRaw',
      label: 'floor: bun-compiled raw socket (SET NX PX, spawn true, DEL)',
      run: () => timed(floors.built['raw-socket'], floorArgs),
    },
    floors.built.ioredis && {
      id: 'bunIoredis',
      label: 'floor: bun-compiled ioredis (set NX PX, spawn true, del, quit)',
      run: () => timed(floors.built.ioredis, floorArgs),
    },
    nodePeer.file && {
      id: 'nodeIoredis',
      label: 'peer: node + ioredis script (bundled)',
      run: () => timed(process.execPath, [nodePeer.file, ...floorArgs]),
    },
    binary && { id: 'binaryHeartbeat', label: 'dlock-linux-x64 heartbeat', run: () => beat(binary) },
    binary && { id: 'binary', label: 'dlock-linux-x64 run k -- true', run: () => run(binary) },
    binary && { id: 'binaryPing', label: 'dlock-linux-x64 run --ping <local> k -- true', run: () => runPinged(binary) },
    etcd && { id: 'etcdDlock', label: 'dlock run k -- true on etcd (npm)', run: () => runOnEtcd(dlock), mayFail: true },
    etcd &&
      binary && {
        id: 'etcdBinary',
        label: 'dlock-linux-x64 run k -- true on etcd',
        run: () => runOnEtcd(binary),
        mayFail: true,
      },
    baseline && {
      id: 'baseDlock',
      label: `baseline: dlock run k -- true (npm, ${baseline.dir})`,
      run: () => run(baseline.dlock),
    },
    baseline?.binary && {
      id: 'baseBinary',
      label: 'baseline: dlock-linux-x64 run k -- true',
      run: () => run(baseline.binary),
    },
    which('flock') && {
      id: 'flock',
      label: 'flock /tmp/k true',
      run: () => timed('flock', [join(lockDir, 'k'), 'true']),
    },
    etcd && {
      id: 'etcdctl',
      label: 'etcdctl lock k true',
      run: () =>
        timed('etcdctl', ['--endpoints', etcd.endpoint, 'lock', 'bench-overhead', 'true'], {
          env: { ...process.env, ETCDCTL_API: '3' },
        }),
    },
  ].filter(Boolean);

  const samples = Object.fromEntries(commands.map((c) => [c.id, []]));
  // A command that may fail (dlock on etcd) and did: why, in one line; it is left out of later rounds.
  const failed = {};
  const attempt = async (command) => {
    try {
      return await command.run();
    } catch (error) {
      if (!command.mayFail) throw error;
      failed[command.id] = whyFailed(error.message);
      return undefined;
    }
  };
  try {
    for (let round = 0; round < plan.warmup + plan.overheadRounds; round++) {
      for (let i = 0; i < commands.length; i++) {
        const command = commands[(round + i) % commands.length];
        if (failed[command.id]) continue;
        const ms = await attempt(command);
        if (round >= plan.warmup && ms !== undefined) samples[command.id].push(ms);
      }
    }
  } finally {
    await pings.close();
    etcd?.stop();
    rmSync(lockDir, { recursive: true, force: true });
  }

  const measured = commands.filter((c) => !failed[c.id]);
  const stats = Object.fromEntries(measured.map((c) => [c.id, summarize(samples[c.id])]));
  const node = stats.node.median;
  // Targets of issue 15, as ratios of medians measured side by side in this run. The npm run's
  // (≤ 1.45×) gave way to issue 32's goal for the same ratio: floorRows() judges it, once.
  const NODE_TARGETS = { version: 1.15, binary: 0.5 };
  // Issue 23: a heartbeat cheap enough to run in a job's every loop.
  const MS_TARGETS = { binaryHeartbeat: 10 };
  const rows = commands.map((c) =>
    failed[c.id]
      ? { section: '1 overhead', measure: c.label, failed: failed[c.id] }
      : {
          section: '1 overhead',
          measure: c.label,
          unit: 'ms',
          ...pick(stats[c.id]),
          ratio: ratio(stats[c.id].median, node),
          ratioOf: c.id === 'node' ? 'baseline' : '÷ node -e 0',
          ...(NODE_TARGETS[c.id] ? atMost(ratio(stats[c.id].median, node), NODE_TARGETS[c.id]) : {}),
          ...(MS_TARGETS[c.id] ? atMost(stats[c.id].median, MS_TARGETS[c.id], ' ms') : {}),
        },
  );
  if (!binary) {
    rows.push({
      section: '1 overhead',
      measure: 'dlock-linux-x64 run k -- true',
      skipped: 'dist/dlock-linux-x64 missing (npm run build:binary)',
      target: '≤ 0.5× node',
    });
  }
  if (nodePeer.failed)
    rows.push({ section: '1 overhead', measure: 'peer: node + ioredis script (bundled)', skipped: nodePeer.failed });
  if (!which('flock'))
    rows.push({ section: '1 overhead', measure: 'flock /tmp/k true', skipped: 'flock not installed' });
  if (!etcd)
    rows.push({ section: '1 overhead', measure: 'etcdctl lock k true', skipped: `not available (${etcdNote})` });
  // The 1 MB row against the same run without them: start-up may grow with the bytes, never with their square.
  const longArgs = ratio(stats.longArgs.median, stats.dlock.median);
  const longMeasure = 'dlock run with 1 MB of arguments ÷ without';
  rows.push({
    section: '1 overhead',
    measure: longMeasure,
    unit: '×',
    ratio: longArgs,
    ratioOf: 'medians',
    ...atMost(longArgs, 2),
  });
  // --ping's cost: the same run with and without it, each build; reported, no target.
  for (const [id, without, label] of [
    ['ping', 'dlock', 'dlock run --ping <local> ÷ without (npm)'],
    ['binaryPing', 'binary', 'dlock-linux-x64 run --ping <local> ÷ without'],
  ]) {
    if (!stats[id]) continue;
    const value = ratio(stats[id].median, stats[without].median);
    const extraMs = Math.round((stats[id].median - stats[without].median) * 10) / 10;
    rows.push({
      section: '1 overhead',
      measure: `${label}: +${extraMs} ms`,
      unit: '×',
      ratio: value,
      ratioOf: 'medians',
    });
  }
  // What dlock adds to the runtime's own start when it answers a heartbeat (reported, no target).
  if (stats.bunFloor && stats.binaryHeartbeat) {
    const extraMs = Math.round((stats.binaryHeartbeat.median - stats.bunFloor.median) * 10) / 10;
    rows.push({
      section: '1 overhead',
      measure: `dlock-linux-x64 heartbeat ÷ the bun floor: +${extraMs} ms`,
      unit: '×',
      ratio: ratio(stats.binaryHeartbeat.median, stats.bunFloor.median),
      ratioOf: 'medians',
    });
  }
  // --baseline: this build's ratio to node -e 0 beside the baseline's, measured in the same rounds.
  for (const [id, base, label] of [
    ['dlock', 'baseDlock', 'dlock run (npm)'],
    ['binary', 'baseBinary', 'dlock-linux-x64 run'],
  ]) {
    if (!stats[id] || !stats[base]) continue;
    const delta = Math.round((ratio(stats[id].median, node) - ratio(stats[base].median, node)) * 1000) / 1000;
    rows.push({
      section: '1 overhead',
      measure: `${label} ÷ node -e 0, this build − the baseline's: ${delta >= 0 ? '+' : ''}${delta}`,
      unit: '×',
      ratio: delta,
      ratioOf: 'difference of ratios',
    });
  }
  // Each build ÷ its peers, reported; the binary ÷ etcdctl lock is a floors row (its goal, was ≤ 3×).
  const builds = [{ id: 'dlock', label: 'dlock run (npm)' }, binary && { id: 'binary', label: 'dlock-linux-x64 run' }];
  for (const peer of ['etcdctl', 'flock']) {
    const peerLabel = peer === 'etcdctl' ? 'etcdctl lock k true' : 'flock /tmp/k true';
    for (const build of builds.filter(Boolean)) {
      if (!stats[peer] || (build.id === 'binary' && peer === 'etcdctl')) continue;
      rows.push({
        section: '1 overhead',
        measure: `${build.label} ÷ ${peerLabel}`,
        unit: '×',
        ratio: ratio(stats[build.id].median, stats[peer].median),
        ratioOf: 'medians',
      });
    }
  }
  rows.push(...floorRows(stats, { floors, etcdNote }));
  const labels = Object.fromEntries(commands.map((c) => [c.id, c.label]));
  rows.push(...etcdRows(stats, { failed, labels, etcdNote, binary }));
  return {
    rows,
    data: {
      rounds: plan.overheadRounds,
      warmup: plan.warmup,
      floorsFailed: floors.failed,
      nodePeerFailed: nodePeer.failed,
      etcdFailed: failed,
      stats,
      samples,
    },
  };
}

/**
 * Every dlock row beside what its runtime can do (issue 32): its ratio to the floor timed in the same
 * rounds and the milliseconds above it, with the issue's goals (rows marked `goal`: pass/MISS,
 * counted apart from the targets). Where an older target judged the same ratio, the goal replaces it
 * in the table and the old limit is shown in the same row (`was`): the no-loss guard that still fails
 * --strict when broken (`guardPass`), with no second verdict.
 */
function floorRows(stats, { floors, etcdNote }) {
  const missing = {
    bunHello: floors.failed.hello,
    bunRaw: floors.failed['raw-socket'],
    bunIoredis: floors.failed.ioredis,
    etcdctl: etcdNote,
    binary: 'dist/dlock-linux-x64 missing (npm run build:binary)',
    binaryVersion: 'dist/dlock-linux-x64 missing (npm run build:binary)',
  };
  const comparisons = [
    { id: 'binaryVersion', floor: 'bunHello', label: 'dlock-linux-x64 --version ÷ floor: bun hello-world', goal: 2 },
    { id: 'binary', floor: 'bunRaw', label: 'dlock-linux-x64 run ÷ floor: bun raw socket' },
    { id: 'binary', floor: 'bunIoredis', label: 'dlock-linux-x64 run ÷ floor: bun ioredis', stretch: 1.2 },
    { id: 'binary', floor: 'etcdctl', label: 'dlock-linux-x64 run ÷ etcdctl lock k true', goal: 1, was: 3 },
    { id: 'version', floor: 'node', label: 'dlock --version (npm) ÷ node -e 0' },
    { id: 'dlock', floor: 'node', label: 'dlock run (npm) ÷ node -e 0', goal: 1.3, was: 1.45 },
  ];
  const times = (x) => `${Number.isInteger(x) ? x.toFixed(1) : x}×`;
  return comparisons.map(({ id, floor, label, goal, stretch, was }) => {
    const limit = goal ?? stretch;
    const target =
      limit === undefined
        ? undefined
        : `${goal ? 'goal' : 'stretch'} ≤ ${times(limit)}${was ? ` (was ≤ ${was}×)` : ''}`;
    if (!stats[id] || !stats[floor])
      return { section: '1 floors', measure: label, skipped: missing[stats[id] ? floor : id] ?? 'not run', target };
    const value = ratio(stats[id].median, stats[floor].median);
    const extraMs = Math.round((stats[id].median - stats[floor].median) * 10) / 10;
    return {
      section: '1 floors',
      measure: `${label}: ${extraMs >= 0 ? '+' : ''}${extraMs} ms`,
      unit: '×',
      ratio: value,
      ratioOf: 'medians',
      ...(target ? { target, pass: value <= limit, goal: true } : {}),
      ...(was ? { was, guardPass: value <= was } : {}),
    };
  });
}

/**
 * dlock on etcd (issue 34), each ratio of medians from the same rounds: the binary beside `etcdctl lock`
 * on the same etcd (target ≤ 1.0×), and the npm build's run on etcd beside its run on Redis (≤ 1.1×:
 * the etcd client must not cost a Redis user's start-up, nor an etcd user much more than it). A side
 * that did not run is a skipped row (etcd not installed, no binary) or, when dlock on etcd failed, a
 * MISS that says why.
 */
function etcdRows(stats, { failed, labels, etcdNote, binary }) {
  const comparisons = [
    { id: 'etcdBinary', of: 'etcdctl', label: 'dlock-linux-x64 run on etcd ÷ etcdctl lock k true', limit: 1 },
    { id: 'etcdDlock', of: 'dlock', label: 'dlock run on etcd ÷ on Redis (npm)', limit: 1.1 },
    { id: 'etcdBinary', of: 'binary', label: 'dlock-linux-x64 run on etcd ÷ on Redis' },
    { id: 'etcdDlock', of: 'etcdctl', label: 'dlock run on etcd (npm) ÷ etcdctl lock k true' },
  ];
  const missing = {
    etcdctl: etcdNote,
    etcdDlock: etcdNote,
    etcdBinary: binary ? etcdNote : 'dist/dlock-linux-x64 missing (npm run build:binary)',
    binary: 'dist/dlock-linux-x64 missing (npm run build:binary)',
  };
  return comparisons.map(({ id, of, label, limit }) => {
    const target = limit === undefined ? {} : { target: `≤ ${limit}×` };
    const broken = [id, of].find((side) => failed[side]);
    if (broken) {
      const why = `${labels[broken]} failed (above)`;
      return { section: '1 etcd', measure: label, ...target, ...(limit ? { pass: false } : {}), failed: why };
    }
    if (!stats[id] || !stats[of])
      return { section: '1 etcd', measure: label, ...target, skipped: missing[stats[id] ? of : id] ?? 'not run' };
    const value = ratio(stats[id].median, stats[of].median);
    const extraMs = Math.round((stats[id].median - stats[of].median) * 10) / 10;
    return {
      section: '1 etcd',
      measure: `${label}: ${extraMs >= 0 ? '+' : ''}${extraMs} ms`,
      unit: '×',
      ratio: value,
      ratioOf: 'medians',
      ...(limit === undefined ? {} : atMost(value, limit)),
    };
  });
}

/** Why a timed command failed, in one line: `exit N: <the first line of its stderr>`. */
function whyFailed(message) {
  const exited = / exited (\S+): ([\s\S]*)$/.exec(message);
  if (!exited) return message.split('\n')[0];
  return `exit ${exited[1]}: ${exited[2].split('\n').find((line) => line.trim()) ?? '(no output)'}`;
}

/** An empty program compiled as dist/dlock-linux-x64 is (scripts/build-binary.mjs --floor); undefined if that fails. */
function bunFloor(dir) {
  const out = join(dir, 'bun-floor');
  const script = new URL('../../scripts/build-binary.mjs', import.meta.url);
  try {
    execFileSync(process.execPath, [script.pathname, '--floor', '--out', out], { stdio: 'ignore' });
    return out;
  } catch {
    return undefined;
  }
}
