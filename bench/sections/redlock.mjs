// 4. Redlock: `dlock run k -- true` against N = 1, 3, 5 instances, interleaved round-robin.
// spawn → exit is the acquire+release latency a user sees; spawn → acquired isolates start-up,
// connecting and acquiring (the fan-out that has to be parallel); acquired → released is the
// child plus the release.

import { Proc } from '../lib/proc.mjs';
import { atMost, pick } from '../lib/report.mjs';
import { ratio, summarize } from '../lib/stats.mjs';

const SIZES = [1, 3, 5];

export async function redlock({ plan, servers, dlock }) {
  const samples = Object.fromEntries(SIZES.map((n) => [n, { total: [], acquire: [], child: [] }]));
  for (let round = 0; round < plan.warmup + plan.redlockRounds; round++) {
    for (let i = 0; i < SIZES.length; i++) {
      const n = SIZES[(round + i) % SIZES.length];
      const redis = servers.slice(0, n).flatMap((s) => ['--redis', s.url]);
      const p = await new Proc(dlock, [
        'run',
        ...redis,
        '--log-format',
        'json',
        `bench-redlock-${n}`,
        '--',
        'true',
      ]).done();
      if (round < plan.warmup) continue;
      samples[n].total.push(p.exitedAt - p.spawnedAt);
      samples[n].acquire.push(p.event('acquired').ts_ms - p.spawnedAt);
      samples[n].child.push(p.event('released').ts_ms - p.event('acquired').ts_ms);
    }
  }
  const stats = Object.fromEntries(
    SIZES.map((n) => [
      n,
      {
        total: summarize(samples[n].total),
        acquire: summarize(samples[n].acquire),
        child: summarize(samples[n].child),
      },
    ]),
  );
  const rows = [];
  for (const n of SIZES) {
    const total = ratio(stats[n].total.median, stats[1].total.median);
    rows.push({
      section: '4 redlock',
      measure: `N=${n}: spawn → exit`,
      unit: 'ms',
      ...pick(stats[n].total),
      ratio: total,
      ratioOf: '÷ N=1',
      ...(n === 5 ? atMost(total, 1.5) : {}),
    });
  }
  for (const n of SIZES) {
    rows.push({
      section: '4 redlock',
      measure: `N=${n}: spawn → acquired`,
      unit: 'ms',
      ...pick(stats[n].acquire),
      ratio: ratio(stats[n].acquire.median, stats[1].acquire.median),
      ratioOf: '÷ N=1',
    });
  }
  return { rows, data: { rounds: plan.redlockRounds, stats, samples } };
}
