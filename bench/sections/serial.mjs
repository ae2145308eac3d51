// 3. Serialisation, gated: how close 20 jobs queued on one lock come to running back to back.
// A holder keeps the lock (its child is `head -n 1`, the bench's gate) while 20
// `dlock run --wait 5m k -- sleep 0.05` start and line up; once every one of them is waiting
// (its `waiting` event, and Redis shows it subscribed: no fixed sleep), the gate opens. The row is
// (last exit − the holder's `released`) ÷ (20 × 50 ms): 1.00 would be 20 sleeps back to back with
// no handoff, child spawn, exit or release cost. Start-ups are paid before the gate, so this
// measures dlock's queue, not 20 Node start-ups on 2 cores. Run for the npm build and the binary.
//
// slotsThroughput() is the place of the `--slots 4` row (issue 12): it runs only when
// `dlock run --help` offers --slots, and is a skipped row with a note until then.

import { spawnSync } from 'node:child_process';
import { Proc } from '../lib/proc.mjs';
import { atMost } from '../lib/report.mjs';
import { ratio, summarize } from '../lib/stats.mjs';

const CONTENDERS = 20;
const HOLD_MS = 50;
const SECTION = '3 serialisation';

function breakdown(measure, values) {
  const stats = summarize(values);
  return { section: SECTION, measure: `  ${measure}`, unit: 'ms', median: stats.median, p99: stats.p99, n: stats.n };
}

/**
 * One gated round: `holders` gated holders take the lock (`extra` options, e.g. --slots), then
 * `contenders` jobs line up behind them; every gate opens at once. Times are epoch ms (dlock's
 * `ts_ms` and the bench's exit times use the same clock).
 */
async function gatedRound({ command, redis, key, contenders = CONTENDERS, holders = 1, extra = [] }) {
  const args = (child) => [
    'run',
    '--redis',
    redis.url,
    '--wait',
    '5m',
    ...extra,
    '--log-format',
    'json',
    key,
    '--',
    ...child,
  ];
  const gates = Array.from({ length: holders }, () => new Proc(command, args(['head', '-n', '1']), { stdin: 'pipe' }));
  const procs = [];
  try {
    await Promise.all(gates.map((g) => g.waitFor('acquired')));
    procs.push(...Array.from({ length: contenders }, () => new Proc(command, args(['sleep', String(HOLD_MS / 1000)]))));
    await Promise.all(procs.map((p) => p.waitFor('waiting')));
    await redis.waitForWaiters(key, contenders);
    for (const gate of gates) gate.openGate();
    await Promise.all([...gates, ...procs].map((p) => p.done()));
  } finally {
    for (const p of [...gates, ...procs]) p.kill('SIGKILL');
  }
  const lastExit = Math.max(...procs.map((p) => p.exitedAt));
  const holds = procs
    .map((p) => ({ acquired: p.event('acquired').ts_ms, released: p.event('released').ts_ms }))
    .sort((a, b) => a.acquired - b.acquired);
  if (holds[0].acquired < Math.min(...gates.map((g) => g.gateOpenedAt)))
    throw new Error(`serialisation: a waiter acquired ${key} before its holder's gate opened`);
  // The release, as logged by the holder; a loaded machine can delay that line past the first
  // waiter's "acquired" (Redis ran the release first), so the earlier of the two.
  const releasedAt = Math.min(...gates.map((g) => g.event('released').ts_ms), holds[0].acquired);
  const gaps = holds.slice(1).map((h, i) => h.acquired - holds[i].released);
  return {
    wallMs: lastExit - releasedAt,
    firstHandoffMs: holds[0].acquired - releasedAt,
    overheadPerHoldMs: holds.reduce((sum, h) => sum + (h.released - h.acquired - HOLD_MS), 0) / holds.length,
    handoffsMs: gaps.reduce((a, b) => a + b, 0),
    tailMs: lastExit - holds[holds.length - 1].released,
    // Negative: the next holder logged "acquired" before the previous one logged "released"
    // (a logging delay of the previous holder, not an overlap: Redis ran the release first).
    negativeGaps: gaps.filter((g) => g < 0).length,
  };
}

export async function serial({ plan, redis, dlock, binary }) {
  const rows = [];
  const data = { contenders: CONTENDERS, holdMs: HOLD_MS, idealMs: CONTENDERS * HOLD_MS };
  const builds = [
    { id: 'npm', label: 'npm', command: dlock, limit: 1.25 },
    { id: 'binary', label: 'binary', command: binary, limit: 1.2 },
  ];
  for (const build of builds) {
    const measure = `${CONTENDERS} × run -- sleep ${HOLD_MS / 1000} queued, gate → last exit (${build.label})`;
    if (!build.command) {
      rows.push({
        section: SECTION,
        measure,
        skipped: 'dist/dlock-linux-x64 missing (npm run build:binary)',
        target: `≤ ${build.limit}× ideal`,
      });
      continue;
    }
    const rounds = [];
    for (let r = 0; r < plan.serialRounds; r++)
      rounds.push(await gatedRound({ command: build.command, redis, key: `bench-serial-${build.id}-${r}` }));
    const wall = summarize(rounds.map((r) => r.wallMs));
    const efficiency = ratio(wall.median, CONTENDERS * HOLD_MS);
    rows.push(
      {
        section: SECTION,
        measure,
        unit: 'ms',
        median: wall.median,
        p99: wall.p99,
        n: wall.n,
        ratio: efficiency,
        ratioOf: `÷ ${CONTENDERS * HOLD_MS} ms`,
        ...atMost(efficiency, build.limit),
      },
      breakdown(
        'held − 50 ms, per holder (child spawn, exit, release)',
        rounds.map((r) => r.overheadPerHoldMs),
      ),
      breakdown(
        'sum of the 19 handoffs (events view)',
        rounds.map((r) => r.handoffsMs),
      ),
      breakdown(
        'gate → first acquired + last released → last exit',
        rounds.map((r) => r.firstHandoffMs + r.tailMs),
      ),
    );
    data[build.id] = { wall, rounds };
  }
  const slots = await slotsThroughput({ plan, redis, dlock });
  rows.push(...slots.rows);
  data.slots = slots.data;
  return { rows, data };
}

/**
 * `--slots 4` throughput (issue 12, the lead's row; no target yet): 4 gated holders fill the 4
 * slots, 20 jobs line up, all gates open; (last exit − first release) ÷ (20 × 50 ms ÷ 4).
 * Skipped with a note while `dlock run` has no --slots.
 */
async function slotsThroughput({ plan, redis, dlock }) {
  const SLOTS = 4;
  const measure = `${CONTENDERS} × run --slots ${SLOTS} -- sleep ${HOLD_MS / 1000} queued (npm)`;
  const help = spawnSync(dlock, ['run', '--help'], { encoding: 'utf8' });
  if (!/--slots\b/.test(help.stdout ?? ''))
    return { rows: [{ section: SECTION, measure, skipped: 'dlock run has no --slots yet' }], data: { skipped: true } };
  const idealMs = (CONTENDERS * HOLD_MS) / SLOTS;
  const rounds = [];
  for (let r = 0; r < plan.serialRounds; r++) {
    rounds.push(
      await gatedRound({
        command: dlock,
        redis,
        key: `bench-slots-${r}`,
        holders: SLOTS,
        extra: ['--slots', String(SLOTS)],
      }),
    );
  }
  const wall = summarize(rounds.map((r) => r.wallMs));
  return {
    rows: [
      {
        section: SECTION,
        measure,
        unit: 'ms',
        median: wall.median,
        p99: wall.p99,
        n: wall.n,
        ratio: ratio(wall.median, idealMs),
        ratioOf: `÷ ${idealMs} ms`,
      },
    ],
    data: { slots: SLOTS, idealMs, wall, rounds },
  };
}
