// 2. Handoff: from the holder's release to the next waiter's acquisition, with 1, 10 and 50
// waiters, for dlock and, side by side, node-redlock and redis-semaphore at their defaults.
//
// A first holder takes the lock and keeps it until the bench opens its gate (a line on stdin);
// the waiters are started and the bench waits until every one of them is waiting; then the gate
// opens and the lock passes down the queue, each waiter holding it 50 ms. (1 waiter: a chain of
// gated processes instead, see chain().) Every contender, dlock or peer, is its own Node
// process with its own connection, as dlock is used.
//
// Two views of each handoff:
//   events: acquired.ts_ms of the next holder − released.ts_ms of the previous one, both logged
//     by the contenders right after acquire/release returned (the target is on this one);
//   redis:  on the server's clock (MONITOR), the first write of the lock key (dlock HSET, peers
//     SET) after the release's DEL: the same handoff without the clients' logging delays.

import { fileURLToPath } from 'node:url';
import { Proc, sleep } from '../lib/proc.mjs';
import { atMost, pick } from '../lib/report.mjs';
import { ratio, summarize } from '../lib/stats.mjs';

const CONTENDER = fileURLToPath(new URL('../peers/contender.mjs', import.meta.url));
const HOLD_MS = 50;

function contenders(dlock, url) {
  return [
    {
      id: 'dlock',
      start: (key, gate) =>
        new Proc(dlock, ['run', '--redis', url, '--log-format', 'json', key, '--', ...(gate ? ['head', '-n', '1'] : ['sleep', String(HOLD_MS / 1000)])], {
          stdin: gate ? 'pipe' : 'ignore',
        }),
      lockKey: (key) => `dlock:{${key}}`,
      // dlock says when it waits (subscribed, found the lock busy again): no guessing needed.
      waiting: 'waiting',
      settleMs: 100,
    },
    ...['redis-semaphore', 'redlock'].map((library) => ({
      id: library,
      start: (key, gate) => new Proc(process.execPath, [CONTENDER, library, url, key, gate ? 'gate' : String(HOLD_MS)], { stdin: gate ? 'pipe' : 'ignore' }),
      lockKey: (key) => (library === 'redis-semaphore' ? `mutex:${key}` : key),
      // The peers poll; after "ready" give every waiter time for a first failed try and one retry delay (redlock: 200±100 ms).
      waiting: 'ready',
      settleMs: 400,
    })),
  ];
}

/** Handoff times (ms) in queue order, from every process's acquired/released events. */
function eventHandoffs(contender, key, procs) {
  const holds = procs.map((p) => ({ acquired: p.event('acquired').ts_ms, released: p.event('released').ts_ms, gate: p.gateOpenedAt }));
  const order = [...holds].sort((a, b) => a.acquired - b.acquired);
  // Whoever follows a gated holder must have got in after the bench opened that gate; earlier
  // means the lock expired during the set-up, and the handoff would be meaningless.
  if (order[0] !== holds[0] || order.some((h, i) => h.gate && order[i + 1] && order[i + 1].acquired < h.gate)) {
    throw new Error(`${contender.id}: a waiter acquired ${key} before its holder let it go`);
  }
  return order.slice(1).map((next, i) => next.acquired - order[i].released);
}

/** Handoff times (ms) on the server's clock: DEL of the lock key to the next write of it. */
function redisHandoffs(commands, lockKey) {
  const handoffs = [];
  let releasedAt;
  for (const { ms, name, key } of commands) {
    if (key !== lockKey) continue;
    if (name === 'del') releasedAt = ms;
    else if ((name === 'set' || name === 'hset') && releasedAt !== undefined) {
      handoffs.push(ms - releasedAt);
      releasedAt = undefined;
    }
  }
  return handoffs;
}

/** Run `body` with the processes it starts killed afterwards and the server's commands recorded. */
async function recorded(redis, contender, key, body) {
  const procs = [];
  const tap = await redis.tap();
  try {
    await body(procs);
  } finally {
    for (const p of procs) p.kill('SIGKILL');
  }
  const commands = await tap.stop();
  return { events: eventHandoffs(contender, key, procs), redis: redisHandoffs(commands, contender.lockKey(key)) };
}

/** N waiters queued behind a gated holder, then the lock passes down the queue. */
function queue(redis, contender, key, waiters) {
  return recorded(redis, contender, key, async (procs) => {
    procs.push(contender.start(key, true));
    await procs[0].waitFor('acquired');
    for (let i = 0; i < waiters; i++) procs.push(contender.start(key, false));
    await Promise.all(procs.slice(1).map((p) => p.waitFor(contender.waiting)));
    await sleep(contender.settleMs);
    procs[0].openGate();
    await Promise.all(procs.map((p) => p.done()));
  });
}

/**
 * One waiter at a time, `samples` times: a chain of gated processes, each waiting behind the
 * previous one (which the bench then lets go), so each sample costs one process start.
 */
function chain(redis, contender, key, samples) {
  return recorded(redis, contender, key, async (procs) => {
    procs.push(contender.start(key, true));
    await procs[0].waitFor('acquired');
    for (let i = 0; i < samples; i++) {
      const next = contender.start(key, true);
      procs.push(next);
      await next.waitFor(contender.waiting);
      await sleep(contender.settleMs);
      procs[i].openGate();
      await Promise.all([next.waitFor('acquired'), procs[i].done()]);
    }
    procs[samples].openGate();
    await Promise.all(procs.map((p) => p.done()));
  });
}

export async function handoff({ plan, redis, dlock }) {
  const rows = [];
  const data = {};
  for (const waiters of Object.keys(plan.handoff).map(Number)) {
    const dlockMedian = {};
    for (const contender of contenders(dlock, redis.url)) {
      if (contender.id !== 'dlock' && !plan.peerHandoffWaiters.includes(waiters)) continue;
      const key = `bench-handoff-${contender.id}-${waiters}`;
      const samples = { events: [], redis: [] };
      const rounds = waiters === 1 ? [await chain(redis, contender, key, plan.handoff[1])] : [];
      for (let r = 0; waiters > 1 && r < plan.handoff[waiters]; r++) rounds.push(await queue(redis, contender, `${key}-${r}`, waiters));
      for (const round of rounds) (samples.events.push(...round.events), samples.redis.push(...round.redis));
      const stats = { events: summarize(samples.events), redis: summarize(samples.redis) };
      data[`${contender.id}/${waiters}`] = { stats, negativeEventHandoffs: samples.events.filter((x) => x < 0).length, samples };

      const label = `${contender.id}, ${waiters} waiter${waiters > 1 ? 's' : ''}`;
      for (const view of ['events', 'redis']) {
        const row = { section: '2 handoff', measure: `${label} (${view})`, unit: 'ms', ...pick(stats[view]) };
        if (contender.id === 'dlock') {
          dlockMedian[view] = stats[view].median;
          if (view === 'events') Object.assign(row, { target: 'p50 ≤ 2, p99 ≤ 10 ms', pass: atMost(stats.events.median, 2).pass && atMost(stats.events.p99, 10).pass });
        } else {
          Object.assign(row, { ratio: ratio(stats[view].median, dlockMedian[view]), ratioOf: '÷ dlock p50' });
        }
        rows.push(row);
      }
    }
  }
  return { rows, data };
}
