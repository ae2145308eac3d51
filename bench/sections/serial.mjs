// 3. Serialisation efficiency: 20 `dlock run k -- sleep 0.05` started together. Ideal wall time
// is one start-up (the uncontended `dlock run k -- true` of section 1, same run) + 20 × 50 ms;
// the rows under it say where the rest went.

import { Proc } from '../lib/proc.mjs';
import { atMost } from '../lib/report.mjs';
import { ratio, summarize } from '../lib/stats.mjs';

const CONTENDERS = 20;
const HOLD_MS = 50;

function breakdown(measure, values) {
  const stats = summarize(values);
  return { section: '3 serialisation', measure: `  ${measure}`, unit: 'ms', median: stats.median, p99: stats.p99, n: stats.n };
}

export async function serial({ plan, redis, dlock, startupMs }) {
  const rounds = [];
  for (let r = 0; r < plan.serialRounds; r++) {
    const key = `bench-serial-${r}`;
    const procs = Array.from({ length: CONTENDERS }, () => new Proc(dlock, ['run', '--redis', redis.url, '--log-format', 'json', key, '--', 'sleep', String(HOLD_MS / 1000)]));
    try {
      await Promise.all(procs.map((p) => p.done()));
    } finally {
      for (const p of procs) p.kill('SIGKILL');
    }
    const start = Math.min(...procs.map((p) => p.spawnedAt));
    const holds = procs.map((p) => ({ acquired: p.event('acquired').ts_ms, released: p.event('released').ts_ms })).sort((a, b) => a.acquired - b.acquired);
    const gaps = holds.slice(1).map((h, i) => h.acquired - holds[i].released);
    const wallMs = Math.max(...procs.map((p) => p.exitedAt)) - start;
    rounds.push({
      wallMs,
      efficiency: wallMs / (CONTENDERS * HOLD_MS + startupMs),
      firstAcquiredMs: holds[0].acquired - start,
      heldMs: holds.reduce((sum, h) => sum + (h.released - h.acquired), 0),
      overheadPerHoldMs: holds.reduce((sum, h) => sum + (h.released - h.acquired - HOLD_MS), 0) / holds.length,
      handoffsMs: gaps.reduce((a, b) => a + b, 0),
      tailMs: Math.max(...procs.map((p) => p.exitedAt)) - holds[holds.length - 1].released,
      // Negative: the next holder logged "acquired" before the previous one logged "released"
      // (a logging delay of the previous holder, not an overlap: Redis ran DEL before the next write).
      negativeGaps: gaps.filter((g) => g < 0).length,
    });
  }
  const wall = summarize(rounds.map((r) => r.wallMs));
  const efficiency = ratio(wall.median, CONTENDERS * HOLD_MS + startupMs);
  return {
    rows: [
      {
        section: '3 serialisation',
        measure: `${CONTENDERS} × run -- sleep ${HOLD_MS / 1000} (ideal ${Math.round(CONTENDERS * HOLD_MS + startupMs)} ms)`,
        unit: 'ms',
        median: wall.median,
        p99: wall.p99,
        n: wall.n,
        ratio: efficiency,
        ratioOf: '÷ ideal',
        ...atMost(efficiency, 1.15),
      },
      breakdown('first acquired, after spawning all', rounds.map((r) => r.firstAcquiredMs)),
      breakdown('held − 50 ms, per holder (child spawn, exit, release)', rounds.map((r) => r.overheadPerHoldMs)),
      breakdown('sum of handoffs', rounds.map((r) => r.handoffsMs)),
    ],
    data: { contenders: CONTENDERS, holdMs: HOLD_MS, startupMs, idealMs: CONTENDERS * HOLD_MS + startupMs, wall, rounds },
  };
}
