// 1. Overhead: wall time (spawn to exit) of `dlock run k -- true` and its peers, interleaved
// round-robin (rotating the order each round) so machine drift hits every command alike.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEtcd } from '../lib/etcd.mjs';
import { timed } from '../lib/proc.mjs';
import { atMost, pick } from '../lib/report.mjs';
import { ratio, summarize } from '../lib/stats.mjs';

export async function overhead({ plan, redis, dlock, binary, which }) {
  const lockDir = mkdtempSync(join(tmpdir(), 'dlock-bench-flock-'));
  const etcdSkip = which('etcdctl') && which('etcd') ? undefined : 'etcd/etcdctl not installed';
  const started = etcdSkip ? undefined : await startEtcd();
  const etcd = started?.endpoint ? started : undefined;
  const etcdNote = etcdSkip ?? started?.failed;
  const commands = [
    { id: 'node', label: 'node -e 0', run: () => timed(process.execPath, ['-e', '0']) },
    { id: 'version', label: 'dlock --version', run: () => timed(dlock, ['--version']) },
    { id: 'dlock', label: 'dlock run k -- true', run: () => timed(dlock, ['run', '--redis', redis.url, 'bench-overhead', '--', 'true']) },
    binary && { id: 'binary', label: 'dlock-linux-x64 run k -- true', run: () => timed(binary, ['run', '--redis', redis.url, 'bench-overhead', '--', 'true']) },
    which('flock') && { id: 'flock', label: 'flock /tmp/k true', run: () => timed('flock', [join(lockDir, 'k'), 'true']) },
    etcd && { id: 'etcdctl', label: 'etcdctl lock k true', run: () => timed('etcdctl', ['--endpoints', etcd.endpoint, 'lock', 'bench-overhead', 'true'], { env: { ...process.env, ETCDCTL_API: '3' } }) },
  ].filter(Boolean);

  const samples = Object.fromEntries(commands.map((c) => [c.id, []]));
  try {
    for (let round = 0; round < plan.warmup + plan.overheadRounds; round++) {
      for (let i = 0; i < commands.length; i++) {
        const command = commands[(round + i) % commands.length];
        const ms = await command.run();
        if (round >= plan.warmup) samples[command.id].push(ms);
      }
    }
  } finally {
    etcd?.stop();
    rmSync(lockDir, { recursive: true, force: true });
  }

  const stats = Object.fromEntries(commands.map((c) => [c.id, summarize(samples[c.id])]));
  const node = stats.node.median;
  const rows = commands.map((c) => ({
    section: '1 overhead',
    measure: c.label,
    unit: 'ms',
    ...pick(stats[c.id]),
    ratio: ratio(stats[c.id].median, node),
    ratioOf: c.id === 'node' ? 'baseline' : '÷ node -e 0',
    ...(c.id === 'dlock' ? atMost(ratio(stats[c.id].median, node), 1.5) : {}),
    ...(c.id === 'binary' ? atMost(ratio(stats[c.id].median, node), 1.2) : {}),
  }));
  for (const peer of ['flock', 'etcdctl']) {
    if (stats[peer]) rows.push({ section: '1 overhead', measure: `dlock run ÷ ${commands.find((c) => c.id === peer).label}`, unit: '×', ratio: ratio(stats.dlock.median, stats[peer].median), ratioOf: 'medians' });
  }
  if (!which('flock')) rows.push({ section: '1 overhead', measure: 'flock /tmp/k true', skipped: 'flock not installed' });
  if (!binary) rows.push({ section: '1 overhead', measure: 'dlock-linux-x64 run k -- true', skipped: 'dist/dlock-linux-x64 missing', target: '≤ 1.2× node' });
  if (!etcd) rows.push({ section: '1 overhead', measure: 'etcdctl lock k true', skipped: etcdNote });
  return { rows, data: { rounds: plan.overheadRounds, warmup: plan.warmup, stats, samples }, startupMs: stats.dlock.median };
}
