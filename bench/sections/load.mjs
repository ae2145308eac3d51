// 5. Load on Redis: the commands (round trips) clients send, seen through MONITOR on a server
// of its own and attributed per connection:
//   holder: one `dlock run --ttl 3s` holding (renewals every 1 s), nobody waiting;
//   waiters: 5 more `dlock run` waiting on it, nothing released (the holder's connection excluded);
//   and the same 5 waiters for each peer library at its defaults (full mode only).
// Commands run inside Lua scripts are not round trips and are listed apart in results.json.
// Cross-check without MONITOR's attribution: INFO commandstats deltas over the same windows, the
// holder-alone rate subtracted; commandstats also counts the calls a script makes, so this row
// is higher than the round trips whenever the waiters run scripts.

import { fileURLToPath } from 'node:url';
import { Proc, sleep } from '../lib/proc.mjs';
import { RedisServer } from '../lib/redis.mjs';
import { atMost } from '../lib/report.mjs';

const CONTENDER = fileURLToPath(new URL('../peers/contender.mjs', import.meta.url));
const WAITERS = 5;
const TTL = '3s';

/** The bench's own commands (INFO, MONITOR, its marker ECHO, CLIENT, PUBSUB) are not load. */
const BENCH_OWN = /^(info|monitor|echo|client|pubsub|config)\b/;

/** Calls per second between two INFO commandstats snapshots, the bench's own excluded. */
function callsPerSecond(before, after, seconds) {
  let calls = 0;
  for (const [name, n] of Object.entries(after)) if (!BENCH_OWN.test(name)) calls += n - (before[name] ?? 0);
  return calls / seconds;
}

/** Commands of `window` sent from (or, with exclude, not from) `sources`, counted by name. */
function tally(window, sources, exclude = false) {
  const byName = {};
  let total = 0;
  for (const { name, source } of window.commands) {
    if (sources.has(source) === exclude) continue;
    byName[name] = (byName[name] ?? 0) + 1;
    total++;
  }
  return { total, perSecond: total / window.seconds, byName };
}

export async function load({ plan, dlock }) {
  const redis = await RedisServer.start();
  const rows = [];
  const data = {};
  const started = [];
  const track = (p) => (started.push(p), p);
  const run = (command, stdin = 'ignore') =>
    track(
      new Proc(
        dlock,
        ['run', '--redis', redis.url, '--ttl', TTL, '--log-format', 'json', 'bench-load', '--', ...command],
        { stdin },
      ),
    );
  try {
    const holder = run(['head', '-n', '1'], 'pipe');
    // After its first renewal: the one-off NOSCRIPT + EVAL of a fresh server is not steady load.
    await holder.waitFor('renewed');
    const holderSources = await redis.clientAddresses();
    const statsAlone = await redis.commandCalls();
    const alone = await redis.monitor(plan.holderWindowMs);
    const holderStatsRate = callsPerSecond(statsAlone, await redis.commandCalls(), alone.seconds);
    const holderLoad = tally(alone, holderSources);
    rows.push({
      section: '5 load',
      measure: `holder alone (ttl ${TTL}, renews every 1 s)`,
      unit: 'cmd/s',
      median: holderLoad.perSecond,
      n: holderLoad.total,
    });

    const waiters = Array.from({ length: WAITERS }, () => run(['true']));
    await Promise.all(waiters.map((w) => w.waitFor('waiting')));
    const statsBusy = await redis.commandCalls();
    const busy = await redis.monitor(plan.waiterWindowMs);
    const perWaiterStats =
      (callsPerSecond(statsBusy, await redis.commandCalls(), busy.seconds) - holderStatsRate) / WAITERS;
    const waiterLoad = tally(busy, holderSources, true);
    const perWaiter = waiterLoad.perSecond / WAITERS;
    rows.push({
      section: '5 load',
      measure: `each of ${WAITERS} waiters, nothing released (round trips, MONITOR)`,
      unit: 'cmd/s',
      median: perWaiter,
      n: waiterLoad.total,
      ...atMost(perWaiter, 1, ' cmd/s'),
    });
    rows.push({
      section: '5 load',
      measure: `  the same, INFO commandstats Δ − holder's rate (script calls included)`,
      unit: 'cmd/s',
      median: perWaiterStats,
    });
    data.dlock = {
      ttl: TTL,
      holder: { seconds: alone.seconds, ...holderLoad, inScripts: alone.inScripts },
      commandstats: { holderPerSecond: holderStatsRate, perWaiter: perWaiterStats },
      waiters: {
        seconds: busy.seconds,
        ...waiterLoad,
        perWaiter,
        holderDuringWindow: tally(busy, holderSources),
        inScripts: busy.inScripts,
      },
    };
    for (const w of waiters) w.kill('SIGTERM');
    await Promise.all(waiters.map((w) => w.exited));
    holder.openGate();
    await holder.done();

    for (const library of plan.peerLoad ? ['redis-semaphore', 'redlock'] : []) {
      const peer = (gate) =>
        track(
          new Proc(process.execPath, [CONTENDER, library, redis.url, `bench-load-${library}`, gate ? 'gate' : '0'], {
            stdin: gate ? 'pipe' : 'ignore',
          }),
        );
      const peerHolder = peer(true);
      await peerHolder.waitFor('acquired');
      const peerHolderSources = await redis.clientAddresses();
      const peerWaiters = Array.from({ length: WAITERS }, () => peer(false));
      await Promise.all(peerWaiters.map((w) => w.waitFor('ready')));
      await sleep(300);
      const window = await redis.monitor(plan.peerWindowMs);
      const peerLoad = tally(window, peerHolderSources, true);
      rows.push({
        section: '5 load',
        measure: `each of ${WAITERS} ${library} waiters`,
        unit: 'cmd/s',
        median: peerLoad.perSecond / WAITERS,
        n: peerLoad.total,
      });
      data[library] = {
        waiters: {
          seconds: window.seconds,
          ...peerLoad,
          perWaiter: peerLoad.perSecond / WAITERS,
          inScripts: window.inScripts,
        },
      };
      for (const p of [peerHolder, ...peerWaiters]) p.kill('SIGKILL');
      await Promise.all([peerHolder, ...peerWaiters].map((p) => p.exited));
    }
  } finally {
    for (const p of started) p.kill('SIGKILL');
    redis.kill();
  }
  return { rows, data };
}
