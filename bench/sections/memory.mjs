// 6. Memory: peak RSS (VmHWM) of a dlock process holding the lock, read from /proc after its
// first renewal, against `node -e 0` (its max RSS from /usr/bin/time, or from /proc at exit).

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Proc } from '../lib/proc.mjs';
import { atMost } from '../lib/report.mjs';
import { ratio, summarize } from '../lib/stats.mjs';

const SELF_HWM =
  "process.on('exit',()=>process.stderr.write(/VmHWM:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status','utf8'))[1]))";

/** Peak RSS of `node -e 0` in kB. */
function nodeBaselineKb(which) {
  if (which('/usr/bin/time')) {
    const result = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, '-e', '0'], { encoding: 'utf8' });
    const kb = Number(result.stderr.trim().split('\n').pop());
    if (result.status === 0 && kb > 0) return { kb, method: '/usr/bin/time -f %M' };
  }
  const result = spawnSync(process.execPath, ['-e', SELF_HWM], { encoding: 'utf8' });
  return { kb: Number(result.stderr.trim()), method: '/proc/self/status VmHWM at exit' };
}

/** VmHWM (kB) of a holding dlock, after its first renewal. */
async function holdingKb(command, url) {
  const p = new Proc(
    command,
    ['run', '--redis', url, '--ttl', '600ms', '--log-format', 'json', 'bench-memory', '--', 'head', '-n', '1'],
    { stdin: 'pipe' },
  );
  try {
    await p.waitFor('renewed');
    const status = readFileSync(`/proc/${p.pid}/status`, 'utf8');
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
    const name = /Name:\s+(\S+)/.exec(status)?.[1];
    p.openGate();
    await p.done();
    return { kb, name };
  } finally {
    p.kill('SIGKILL');
  }
}

export async function memory({ plan, redis, dlock, binary, which }) {
  const node = [];
  const held = [];
  const heldBinary = [];
  let method;
  for (let i = 0; i < plan.memorySamples; i++) {
    const base = nodeBaselineKb(which);
    method = base.method;
    node.push(base.kb);
    held.push((await holdingKb(dlock, redis.url)).kb);
    if (binary) heldBinary.push((await holdingKb(binary, redis.url)).kb);
  }
  const mb = (kb) => Math.round((kb / 1024) * 10) / 10;
  const stats = { node: summarize(node), dlock: summarize(held), ...(binary ? { binary: summarize(heldBinary) } : {}) };
  const rows = [
    {
      section: '6 memory',
      measure: `node -e 0 (${method})`,
      unit: 'MB',
      median: mb(stats.node.median),
      p99: mb(stats.node.p99),
      n: stats.node.n,
      ratio: 1,
      ratioOf: 'baseline',
    },
  ];
  const dlockRatio = ratio(stats.dlock.median, stats.node.median);
  rows.push({
    section: '6 memory',
    measure: 'dlock run, holding (VmHWM)',
    unit: 'MB',
    median: mb(stats.dlock.median),
    p99: mb(stats.dlock.p99),
    n: stats.dlock.n,
    ratio: dlockRatio,
    ratioOf: '÷ node -e 0',
    ...atMost(dlockRatio, 1.3),
  });
  if (binary) {
    const binaryRatio = ratio(stats.binary.median, stats.node.median);
    rows.push({
      section: '6 memory',
      measure: 'dlock-linux-x64 run, holding (VmHWM)',
      unit: 'MB',
      median: mb(stats.binary.median),
      p99: mb(stats.binary.p99),
      n: stats.binary.n,
      ratio: binaryRatio,
      ratioOf: '÷ node -e 0',
    });
  }
  return { rows, data: { unit: 'kB', method, stats, samples: { node, dlock: held, binary: heldBinary } } };
}
