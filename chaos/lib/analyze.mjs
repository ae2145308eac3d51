// From what the resource recorded and what each dlock printed, the numbers of one fault kind.
// Every claim of a violation is sound: it rests only on lower bounds of what happened.
//
// Clocks: the child's timestamps ($EPOCHREALTIME) and this runner's Date.now() both read the
// machine's wall clock. dlock's json `ts_ms` is performance.timeOrigin + performance.now(), which
// can disagree with it by tens of ms on a loaded machine, so it is only shown, never relied on:
// each event is timed by when the runner read it (`received_ms`), an upper bound of when dlock
// printed it.
//
// A "witness" is a timestamp the child itself sent (begin, tick every 20 ms, write, end): the
// child was certainly running then.
//
// Lock end, as an UPPER bound: the server applies an acquire or extend before dlock prints the
// `acquired` / `renewed` event, so the lock cannot outlive (last such event read) + ttl. A fault that
// deleted the lock's keys on a quorum (FLUSHALL, restart without persistence) ends it earlier:
// at the time the runner saw that done. (An extend dlock gave up on might still be applied
// later by a resumed server; then the key lives longer than dlock knows, but dlock's own local
// deadline is earlier than this bound, so a child past it is still dlock failing its deadline.)
//
// Past expiry while dlock lived: a witness later than the lock end and earlier than dlock's
// death (the runner's SIGKILL time, else the exit it observed).
// Orphan: a witness later than the observed exit of the child's dlock.
// Overlap: two critical sections [begin, last witness] that intersect: two children were
// certainly inside their critical sections at the same instant.
// Token regression: two acquisitions with the same fence (every acquire INCRs the counter, so
// only a rolled-back counter repeats one: the later one counts), or A and B where A's `acquired` was read before B's
// dlock was even spawned, yet B's fence is lower than A's.
// Stale write accepted: an accepted write whose token is not greater than a token another
// section had already written (the resource rejects lower tokens, so this is an equal token
// handed to a second holder: a rolled-back counter).

import { loadavg } from 'node:os';

const CLOCK_TOLERANCE_MS = 1; // Date.now() truncates to whole ms

export function analyze({ kind, resource, runs, faults, ttlMs, orphansPromised, stalls }) {
  const sections = [...resource.sections.values()].sort((a, b) => a.begin - b.begin);
  const lockEndsAt = faults.map((f) => f.lockEndsAt).filter((t) => t !== undefined);
  const perSection = [];
  const notes = [...resource.protocolErrors.map((e) => `resource: ${e}`)];

  for (const section of sections) {
    const run = runs.get(section.run);
    const acquired = run?.acquired;
    if (!acquired) {
      notes.push(`section ${section.run}: no "acquired" event from its dlock`);
      continue;
    }
    const held = run.events.filter((e) => e.event === 'acquired' || e.event === 'renewed').map((e) => e.received_ms);
    let lockEnd = Math.max(...held) + ttlMs;
    for (const at of lockEndsAt) if (at > acquired.received_ms && at < lockEnd) lockEnd = at;
    const dlockDeath = run.killedAt ?? run.exitedAt ?? Infinity;
    const lived = section.witnesses.filter((t) => t < dlockDeath);
    const lastLived = Math.max(...lived);
    const last = Math.max(...section.witnesses);
    const pastExpiryMs = lived.length && lastLived > lockEnd ? lastLived - lockEnd : 0;
    perSection.push({
      run: section.run,
      worker: run.worker,
      fence: section.token,
      victim: section.victim,
      begin: section.begin,
      last,
      slackMs: lived.length ? lockEnd - lastLived : undefined,
      pastExpiryMs,
      // How long the runner itself was frozen while this child outlived its lock (machine overloaded).
      stallMs: pastExpiryMs > 0 ? stalls.longestWithin(lockEnd - ttlMs, lastLived) : 0,
      orphanMs: run.exitedAt !== undefined && last > run.exitedAt + CLOCK_TOLERANCE_MS ? last - run.exitedAt : 0,
      dlockExit: run.status,
      // The victim's story, in ms after its acquire: lock events, its child's last sign of life, dlock's exit.
      story: story(run, section, acquired.received_ms, lockEnd),
    });
  }

  const overlaps = [];
  for (let i = 0; i < perSection.length; i++) {
    for (let j = i + 1; j < perSection.length && perSection[j].begin < perSection[i].last; j++) {
      overlaps.push({
        runs: [perSection[i].run, perSection[j].run],
        fences: [perSection[i].fence, perSection[j].fence],
        ms: Math.min(perSection[i].last, perSection[j].last) - perSection[j].begin,
      });
    }
  }

  const acquisitions = [...runs.values()]
    .filter((r) => r.acquired && !r.acquired.reentrant)
    .map((r) => ({ run: r.id, fence: BigInt(r.acquired.fence), at: r.acquired.received_ms, spawnedAt: r.spawnedAt }));
  const regressions = acquisitions
    .filter((b) =>
      acquisitions.some(
        (a) => a !== b && ((a.fence === b.fence && a.at < b.at) || (a.at < b.spawnedAt && a.fence > b.fence)),
      ),
    )
    .map((b) => ({ run: b.run, fence: String(b.fence) }));

  const writes = resource.writes;
  const staleAccepted = writes.filter(
    (w) =>
      w.accepted &&
      w.highestBefore !== undefined &&
      w.highestRunBefore !== w.run &&
      BigInt(w.token) <= BigInt(w.highestBefore),
  );
  const staleRejected = writes.filter((w) => !w.accepted);

  const exitCodes = {};
  for (const run of runs.values()) exitCodes[run.status] = (exitCodes[run.status] ?? 0) + 1;

  const slack = perSection.map((s) => s.slackMs).filter((s) => s !== undefined);
  const metrics = {
    faults: faults.filter((f) => !f.skipped).length,
    runs: perSection.length,
    dlock_processes: runs.size,
    overlaps: overlaps.length,
    writes_accepted: writes.filter((w) => w.accepted).length,
    stale_rejected: staleRejected.length,
    stale_accepted: staleAccepted.length,
    token_regressions: regressions.length,
    past_expiry: perSection.filter((s) => s.pastExpiryMs > 0).length,
    max_past_expiry_ms: round(Math.max(0, ...perSection.map((s) => s.pastExpiryMs))),
    orphans: perSection.filter((s) => s.orphanMs > 0).length,
    min_slack_ms: slack.length ? round(Math.min(...slack)) : null,
    longest_runner_stall_ms: round(stalls.longest),
    // dlock woke up past its kill deadline (a stall): it SIGKILLed at once and said so.
    stalls_reported: [...runs.values()].filter((r) => r.events.some((e) => e.event === 'stalled')).length,
    // A child past its lock whose dlock did not say it had been stalled.
    unreported_overruns: perSection.filter(
      (s) => s.pastExpiryMs > 0 && !runs.get(s.run)?.events.some((e) => e.event === 'stalled'),
    ).length,
  };
  const clockSkews = [...runs.values()].flatMap((r) => r.events.map((e) => e.ts_ms - e.received_ms));
  const skew = Math.max(0, ...clockSkews);
  if (skew > 2)
    notes.push(
      `dlock's ts_ms ran up to ${round(skew)} ms ahead of the wall clock (performance.timeOrigin): received_ms used instead`,
    );
  const starved = perSection.filter((s) => s.pastExpiryMs > 0 && s.stallMs >= ttlMs / 3);
  if (starved.length)
    notes.push(
      `${starved.length} past-expiry case(s) coincide with the runner itself frozen for >= ttl/3: the machine is overloaded (load ${loadavg()[0].toFixed(1)}), a promise dlock can only keep when it gets the CPU`,
    );

  const { tokens, expiry } = kind.promises;
  const checks = [
    { property: 'stale_accepted', promised: tokens, value: metrics.stale_accepted },
    { property: 'token_regressions', promised: tokens, value: metrics.token_regressions },
    { property: 'past_expiry', promised: expiry, value: metrics.past_expiry },
    { property: 'orphans', promised: orphansPromised, value: metrics.orphans },
    // Where expiry is not promised because dlock itself is stalled, every overrun is reported.
    ...(kind.reportsOverruns
      ? [{ property: 'unreported_overruns', promised: true, value: metrics.unreported_overruns }]
      : []),
    // Follows from the two promises: the lock is exclusive on the server and no child outlives it.
    { property: 'overlaps', promised: tokens && expiry, value: metrics.overlaps },
  ].map((c) => ({ ...c, pass: !c.promised || c.value === 0 }));
  // A row that injected nothing, or saw no work, proves nothing: that is a harness failure.
  if (kind.inject)
    checks.push({ property: 'faults_injected', promised: true, value: metrics.faults, pass: metrics.faults > 0 });
  checks.push({ property: 'runs', promised: true, value: metrics.runs, pass: metrics.runs > 0 });
  checks.push({
    property: 'harness_errors',
    promised: true,
    value: resource.protocolErrors.length,
    pass: resource.protocolErrors.length === 0,
  });

  return {
    metrics,
    checks,
    exit_codes: exitCodes,
    details: {
      overlaps,
      token_regressions: regressions,
      stale_accepted: staleAccepted,
      stale_rejected: staleRejected.map(({ run, token, highestBefore }) => ({ run, token, highest: highestBefore })),
      past_expiry: perSection
        .filter((s) => s.pastExpiryMs > 0)
        .map(({ run, fence, pastExpiryMs, stallMs, dlockExit }) => ({
          run,
          fence,
          ms: round(pastExpiryMs),
          runner_stall_ms: round(stallMs),
          dlock_exit: dlockExit,
        })),
      orphans: perSection
        .filter((s) => s.orphanMs > 0)
        .map(({ run, fence, orphanMs }) => ({ run, fence, ms: round(orphanMs) })),
      victims: perSection
        .filter((s) => s.victim)
        .map(({ run, fence, slackMs, dlockExit, story }) => ({
          run,
          fence,
          slack_ms: slackMs === undefined ? null : round(slackMs),
          dlock_exit: dlockExit,
          story,
        })),
      // Every section named above that is not a victim, with its story too (at most 20).
      others: perSection
        .filter(
          (s) =>
            !s.victim &&
            (s.pastExpiryMs > 0 ||
              s.orphanMs > 0 ||
              overlaps.some((o) => o.runs.includes(s.run)) ||
              regressions.some((r) => r.run === s.run) ||
              writes.some((w) => w.run === s.run && (!w.accepted || staleAccepted.includes(w)))),
        )
        .slice(0, 20)
        .map(({ run, fence, dlockExit, story }) => ({ run, fence, dlock_exit: dlockExit, story })),
    },
    notes,
  };
}

function story(run, section, from, lockEnd) {
  const at = (t) => round(t - from);
  return [
    `spawned +${at(run.spawnedAt)}`,
    `child began +${at(section.begin)}`,
    ...run.events
      .filter((e) => e.event !== 'acquired')
      .map(
        (e) => `${e.event}${e.reason ? ` (${e.reason})` : ''}${e.error ? ` (${e.error})` : ''} +${at(e.received_ms)}`,
      ),
    section.toldAt !== undefined ? `child told to write +${at(section.toldAt)}` : undefined,
    ...section.writes.map((w) => `child wrote ${w.accepted ? '(accepted)' : '(rejected as stale)'} +${at(w.at)}`),
    `child's last sign of life +${at(Math.max(...section.witnesses))}`,
    section.closedAt !== undefined ? `child's connection closed +${at(section.closedAt)}` : undefined,
    `lock end +${at(lockEnd)}`,
    run.killedAt !== undefined ? `dlock SIGKILLed +${at(run.killedAt)}` : undefined,
    `dlock exited ${run.status} +${at(run.exitedAt)}`,
  ].filter(Boolean);
}

function round(ms) {
  return Math.round(ms * 10) / 10;
}
