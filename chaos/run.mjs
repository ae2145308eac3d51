// npm run chaos [-- --seed N] [-- --duration 120s] [-- --smoke]: workers loop `dlock run` on one
// key around a fenced resource while faults are injected at random (seeded); prints a table per
// fault kind, writes chaos/results.json, and exits 1 if a property docs/guarantees.md promises under a
// fault was violated. Everything runs on 127.0.0.1 and is cleaned up on every exit path.
// See chaos/README.md.

import { accessSync, constants, existsSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { delimiter, join } from 'node:path';
import { parseArgs, reproduce, USAGE, UsageError } from './lib/args.mjs';
import { faultKinds, orphansPromised } from './lib/faults.mjs';
import { runPhase } from './lib/phase.mjs';
import { installCleanup, killAll, liveCount } from './lib/procs.mjs';
import { formatMarkdown, formatTable } from './lib/report.mjs';
import { DLOCK, ROOT } from './lib/workers.mjs';

function onPath(command) {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir || '.', command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (!process.env.DLOCK_BIN && !existsSync(join(ROOT, 'dist/dlock.cjs')))
    throw new Error('dist/dlock.cjs is missing: run `npm run build` first');
  for (const command of ['redis-server', 'bash']) if (!onPath(command)) throw new Error(`${command} is not installed`);

  const all = faultKinds(options);
  const unknown = (options.kinds ?? []).filter((name) => !all.some((k) => k.name === name));
  if (unknown.length)
    throw new UsageError(
      `--kinds: unknown fault kind(s): ${unknown.join(', ')} (known: ${all.map((k) => k.name).join(', ')})`,
    );
  const kinds = options.kinds ? all.filter((k) => options.kinds.includes(k.name)) : all;
  const runnable = kinds.filter((k) => !k.available?.());
  const phaseMs = options.durationMs / Math.max(1, runnable.length);
  const orphans = orphansPromised();

  console.log(
    `dlock chaos (${options.mode}): seed ${options.seed}, ${runnable.length} fault kinds x ${(phaseMs / 1000).toFixed(1)} s, ttl ${options.ttlMs} ms, ${options.workers} workers, ${DLOCK}`,
  );
  console.log(`reproduce: ${reproduce(options)}`);
  const began = Date.now();
  const rows = [];
  for (const kind of kinds) {
    const row = { name: kind.name, title: kind.title, promises: kind.promises, dlock_args: kind.dlockArgs ?? [] };
    const skipped = kind.available?.();
    if (skipped) {
      rows.push({ ...row, skipped });
      console.log(`  ${kind.name}: skipped (${skipped})`);
      continue;
    }
    const result = await runPhase(kind, {
      seed: options.seed,
      ttlMs: options.ttlMs,
      workers: options.workers,
      phaseMs,
      orphansPromised: orphans,
    });
    rows.push({ ...row, ...result });
    const failed = result.checks.filter((c) => !c.pass).map((c) => c.property);
    console.log(
      `  ${kind.name}: ${result.metrics.faults} faults, ${result.metrics.runs} runs in ${result.seconds} s${failed.length ? ` VIOLATED: ${failed.join(', ')}` : ''}`,
    );
    for (const note of result.notes.slice(0, 5)) console.log(`    note: ${note}`);
  }

  const violations = rows.flatMap((r) => (r.checks ?? []).filter((c) => !c.pass).map((c) => ({ kind: r.name, ...c })));
  const results = {
    seed: options.seed,
    mode: options.mode,
    reproduce: reproduce(options),
    ttl_ms: options.ttlMs,
    workers: options.workers,
    duration_s: Math.round((Date.now() - began) / 100) / 10,
    started: new Date(began).toISOString(),
    dlock: DLOCK,
    machine: { cores: cpus().length, node: process.version, loadavg: loadavg().map((x) => Math.round(x * 100) / 100) },
    orphans_promised: orphans,
    pass: violations.length === 0,
    violations,
    table: formatMarkdown(rows),
    kinds: rows,
  };
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);

  console.log(`\n${formatTable(rows)}\n`);
  console.log(
    'Numbers in parentheses are not promised by docs/guarantees.md under that fault (reported, not failures).',
  );
  if (options.markdown) console.log(`\n${results.table}\n`);
  console.log(`${results.duration_s} s; results in ${options.out}; reproduce: ${results.reproduce}`);
  if (violations.length) {
    for (const v of violations)
      console.error(
        `chaos: VIOLATED under ${v.kind}: ${v.property} = ${v.value} (must be ${v.property === 'runs' || v.property === 'faults_injected' ? '> 0' : '0'})`,
      );
    return 1;
  }
  return 0;
}

installCleanup();
main()
  .then((code) => {
    if (liveCount() > 0) console.error(`chaos: ${liveCount()} processes still running at the end: killed`);
    killAll();
    // Exit now, not when the event loop drains: twice in CI a smoke run against the binary wrote its
    // results and then spun a core for minutes without exiting (cause not found; no syscalls).
    process.exit(code);
  })
  .catch((error) => {
    killAll();
    console.error(`chaos: ${error instanceof UsageError ? `${error.message}\n${USAGE}` : error.stack}`);
    process.exitCode = 2;
  });
