// One fault kind's phase: start its topology, a fresh fenced resource and the workers on a
// key of its own; while time remains, pick the next critical section to begin as the victim
// (it holds for several TTLs), inject the fault during its hold, wait for the victim's dlock
// to finish; then stop everything and analyse.

import { waitUntil } from '../../support/wait-until.mjs';
import { analyze } from './analyze.mjs';
import { sleep, timeLimit, wallMs } from './procs.mjs';
import { deriveSeed, seededRandom } from './random.mjs';
import { FencedResource } from './resource.mjs';
import { StallMonitor } from './stalls.mjs';
import { Workers } from './workers.mjs';

/** Ordinary critical sections hold 4%-80% of a TTL: some are renewed, none is long. */
const HOLD_TTLS = [0.04, 0.8];

export async function runPhase(kind, { seed, ttlMs, workers: count, phaseMs, orphansPromised }) {
  const random = seededRandom(deriveSeed(seed, kind.name));
  const holds = seededRandom(deriveSeed(seed, `${kind.name}/holds`));
  const topology = await kind.topology();
  const quorum = Math.floor(topology.servers.length / 2) + 1;
  let resource;
  let workers;
  const faults = [];
  const began = wallMs();
  const stalls = new StallMonitor();
  try {
    resource = await FencedResource.start(() => holds.between(...HOLD_TTLS) * ttlMs);
    workers = new Workers({
      count,
      urls: topology.urls,
      key: `chaos-${kind.name}`,
      ttlMs,
      resourcePort: resource.port,
      extraArgs: kind.dlockArgs,
    });
    workers.start();
    if (!kind.inject) {
      await sleep(phaseMs);
    } else {
      const holdMs = kind.victimHoldTtls * ttlMs;
      const cycleMs = holdMs + 2 * ttlMs;
      // At least one fault per phase, more while the phase's share of --duration lasts.
      do {
        await sleep(random.between(0.5, 1.5) * ttlMs);
        const section = await resource.nextVictim(holdMs, 6 * ttlMs + 5_000, {
          writeAfterNewer: kind.victimWritesAfterNewer,
          capMs: 4 * holdMs,
        });
        if (!section) {
          faults.push({ skipped: 'no critical section began in time' });
          continue;
        }
        const victim = workers.runs.get(section.run);
        await sleep(random.between(...kind.injectAfterTtls) * ttlMs);
        const fault = await kind.inject({
          servers: topology.servers,
          topology,
          resource,
          victim,
          section,
          random,
          ttlMs,
          quorum,
        });
        faults.push({ victim_run: section.run, victim_fence: section.token, ...fault });
        await Promise.race([victim.exited, timeLimit(holdMs + 4 * ttlMs)]);
      } while (wallMs() - began + cycleMs < phaseMs);
      // The workers carry on without faults for the rest of the phase's share, and at least
      // until a critical section has begun after the last fault ended (what the fault left
      // behind, such as a rolled-back counter, shows only in the work after it).
      await sleep(phaseMs - (wallMs() - began));
      const healed = Math.max(0, ...faults.map((f) => f.healedAt ?? f.at ?? 0));
      const sectionAfter = () => [...resource.sections.values()].some((s) => s.begin > healed);
      await waitUntil('a critical section after the last fault', sectionAfter, { timeoutMs: 6 * ttlMs + 2_000 }).catch(
        () => {},
      );
    }
  } finally {
    for (const server of topology.servers) server.resume();
    topology.proxy?.resume();
    await workers?.stop((kind.victimHoldTtls ?? 1) * ttlMs + 3 * ttlMs + 3_000);
    await resource?.close();
    await topology.close();
    stalls.stop();
  }
  const result = analyze({ kind, resource, runs: workers.runs, faults, ttlMs, orphansPromised, stalls });
  return { ...result, faults, seconds: Math.round((wallMs() - began) / 100) / 10 };
}
