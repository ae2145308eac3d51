// The chaos runner's command line: --seed, --duration, --ttl, --workers, --redlock, --kinds,
// --out, --markdown, --smoke; and the npm command that reproduces a run.

import { join, resolve } from 'node:path';
import { ROOT } from './workers.mjs';

export const USAGE = `usage: node chaos/run.mjs [--seed N] [--duration 120s] [--ttl 1s] [--workers 3]
                         [--redlock 3|5] [--kinds a,b,...] [--out FILE] [--markdown] [--smoke]
  --smoke   a short run (default 20s, ttl 500ms) for CI`;

const DEFAULTS = {
  full: { duration: '120s', ttl: '1s' },
  smoke: { duration: '20s', ttl: '500ms' },
};

export class UsageError extends Error {}

function parseDuration(option, text) {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(String(text));
  if (!match) throw new UsageError(`${option}: not a duration: "${text}" (use 500ms, 20s, 2m)`);
  const ms = Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[match[2] ?? 's'];
  if (ms < 100) throw new UsageError(`${option}: too short: "${text}"`);
  return ms;
}

export function parseArgs(argv) {
  const raw = { smoke: false, markdown: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--smoke' || arg === '--markdown') raw[arg.slice(2)] = true;
    else if (arg === '-h' || arg === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else if (['--seed', '--duration', '--ttl', '--workers', '--redlock', '--kinds', '--out'].includes(arg)) {
      if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value`);
      raw[arg.slice(2)] = argv[++i];
    } else throw new UsageError(`unknown argument: ${arg}`);
  }
  const mode = raw.smoke ? 'smoke' : 'full';
  const seed =
    raw.seed === undefined ? 1 + Math.floor(Math.random() * 2 ** 31) : /^\d+$/.test(raw.seed) ? Number(raw.seed) : NaN;
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32)
    throw new UsageError(`--seed: not an integer in 0..2^32-1: "${raw.seed}"`);
  const workers = Number(raw.workers ?? 3);
  if (!Number.isInteger(workers) || workers < 2 || workers > 16)
    throw new UsageError(`--workers: an integer 2..16, not "${raw.workers}"`);
  const redlockInstances = Number(raw.redlock ?? 3);
  if (![3, 5].includes(redlockInstances)) throw new UsageError(`--redlock: 3 or 5, not "${raw.redlock}"`);
  return {
    mode,
    seed,
    durationMs: parseDuration('--duration', raw.duration ?? DEFAULTS[mode].duration),
    ttlMs: parseDuration('--ttl', raw.ttl ?? DEFAULTS[mode].ttl),
    workers,
    redlockInstances,
    kinds: raw.kinds?.split(',').filter(Boolean),
    out: resolve(raw.out ?? join(ROOT, mode === 'smoke' ? 'chaos/results-smoke.json' : 'chaos/results.json')),
    markdown: raw.markdown,
    argv,
  };
}

/** The npm command that runs the same schedule again. */
export function reproduce(options) {
  const flags = [`--seed ${options.seed}`, `--duration ${options.durationMs / 1000}s`, `--ttl ${options.ttlMs}ms`];
  if (options.mode === 'smoke') flags.unshift('--smoke');
  if (options.workers !== 3) flags.push(`--workers ${options.workers}`);
  if (options.redlockInstances !== 3) flags.push(`--redlock ${options.redlockInstances}`);
  if (options.kinds) flags.push(`--kinds ${options.kinds.join(',')}`);
  return `${process.env.DLOCK_BIN ? `DLOCK_BIN=${process.env.DLOCK_BIN} ` : ''}npm run chaos -- ${flags.join(' ')}`;
}
