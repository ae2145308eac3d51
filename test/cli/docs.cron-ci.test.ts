// The crontab lines and CI pipelines of the docs, which the transcripts cannot run as they stand:
// each crontab (README.md, docs/, the --help epilogues) finds dlock and Redis under cron's bare
// environment, and its line runs as cron would run it; each CI pipeline of docs/guides/ci.md parses
// as YAML and hands the lock's token on in a way the CI system keeps (not a masked job output).

import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import type { RedisServer } from '../../support/redis-server.mjs';
import { BINARY, dlock, DLOCK } from '../helpers/cli.js';
import { useRedisServer } from '../helpers/server.js';
import { tempDir } from '../fixtures/observe.js';
import { blocksOf, type Block } from '../helpers/transcript.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** cron's environment for a job (Vixie cron, cronie): HOME, LOGNAME, SHELL and this PATH, nothing else. */
const CRON_PATH = '/usr/bin:/bin';
/** Where both installs put dlock (README.md, docs/install.md). */
const INSTALL_DIR = '/usr/local/bin';

function markdown(): Block[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
    );
  return ['README.md', ...walk('docs')].flatMap((file) => blocksOf(file, readFileSync(join(ROOT, file), 'utf8')));
}

interface CronJob {
  where: string;
  /** The NAME=value lines above it in its crontab. */
  env: Record<string, string>;
  command: string;
}

/** The jobs of a crontab text: each line of 5 time fields and a command, with the variables set above it. */
function cronJobs(where: string, text: string): CronJob[] {
  const env: Record<string, string> = {};
  const jobs: CronJob[] = [];
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (!line || line.startsWith('#')) continue;
    const assignment = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (assignment) env[assignment[1]] = assignment[2];
    else if (/^(\S+\s+){5}\S/.test(line))
      jobs.push({ where, env: { ...env }, command: line.split(/\s+/).slice(5).join(' ') });
  }
  return jobs;
}

/** The crontab examples of a --help text: each example (a "# crontab…" comment and its lines). */
function helpCrontabs(command: string, help: string): CronJob[] {
  const items = help.split(/\n\s*\n/).filter((item) => /^\s*# crontab/m.test(item));
  return items.flatMap((item) => cronJobs(`dlock ${command} --help`, item.replace(/^\s*#.*$/gm, '')));
}

function mentionsDlock(job: CronJob): boolean {
  return /(^|[\s/;|&(])dlock\s/.test(job.command);
}

describe('crontabs find dlock and Redis under cron', () => {
  test('every crontab line that calls dlock has /usr/local/bin on its PATH (or calls it by path) and names Redis', async () => {
    const jobs = markdown()
      .filter((block) => block.lang === 'cron')
      .flatMap((block) => cronJobs(`${block.file}:${block.line}`, block.body));
    for (const command of ['run', 'metrics']) {
      const help = await dlock([command, '--help']);
      jobs.push(...helpCrontabs(command, help.stdout));
    }
    const withDlock = jobs.filter(mentionsDlock);
    expect(withDlock.length).toBeGreaterThanOrEqual(5);
    const wrong = withDlock.flatMap((job) => {
      const path = (job.env.PATH ?? CRON_PATH).split(':');
      const problems = [];
      if (!path.includes(INSTALL_DIR) && !new RegExp(`${INSTALL_DIR}/dlock\\s`).test(job.command))
        problems.push(`dlock is not on its PATH (${path.join(':')})`);
      // The npm build's bin/dlock runs `node` by name: node must be on that PATH too.
      if (!path.includes(INSTALL_DIR) || !path.includes('/usr/bin')) problems.push('node may not be on its PATH');
      if (!job.env.DLOCK_REDIS_URL && !/--redis\s/.test(job.command)) problems.push('no DLOCK_REDIS_URL or --redis');
      return problems.map((problem) => `${job.where}: ${job.command}: ${problem}`);
    });
    expect(wrong).toEqual([]);
  });

  test('the npm build runs node by name (so the crontab PATH must hold node too, as the docs say)', () => {
    expect(readFileSync(join(ROOT, 'bin/dlock'), 'utf8')).toMatch(/\bexec node "\$0"/);
    expect(readFileSync(join(ROOT, 'docs/guides/cron.md'), 'utf8')).toMatch(/npm build[^.]*`node`/);
  });
});

describe("cron.md's crontab runs as cron runs it", () => {
  let redis: RedisServer;
  useRedisServer((server) => (redis = server));

  /**
   * cron's environment for a job of the crontab: `env -i`, then cron's HOME, LOGNAME, SHELL and
   * PATH, then the crontab's own NAME=value lines. /usr/local/bin stands for a directory holding
   * dlock (and node, as an install into /usr/local puts it), the Redis URL for the test server's.
   */
  function cronEnv(job: CronJob, localBin: string): Record<string, string> {
    const env: Record<string, string> = { HOME: tempDir(), LOGNAME: 'cron', SHELL: '/bin/sh', PATH: CRON_PATH };
    for (const [name, value] of Object.entries(job.env)) env[name] = value;
    env.PATH = env.PATH.split(':')
      .map((dir) => (dir === INSTALL_DIR ? localBin : dir))
      .join(':');
    if (env.DLOCK_REDIS_URL) env.DLOCK_REDIS_URL = redis.url;
    return env;
  }

  function localBin(withNode: boolean): string {
    const dir = join(tempDir(), 'usr-local-bin');
    mkdirSync(dir);
    symlinkSync(DLOCK, join(dir, 'dlock'));
    if (withNode) symlinkSync(process.execPath, join(dir, 'node'));
    return dir;
  }

  const firstJob = () => {
    const block = markdown().find((b) => b.file === 'docs/guides/cron.md' && b.lang === 'cron')!;
    return cronJobs(`${block.file}:${block.line}`, block.body)[0];
  };

  function runAsCron(job: CronJob, env: Record<string, string>) {
    const script = join(tempDir(), 'sync.sh');
    writeFileSync(script, '#!/bin/sh\necho "synced with fence $DLOCK_FENCING_TOKEN"\n', { mode: 0o755 });
    const command = job.command.replace('/opt/jobs/sync.sh', script);
    return spawnSync('/bin/sh', ['-c', command], { env, encoding: 'utf8', timeout: 20_000 });
  }

  test('the first crontab line of cron.md runs the job, under the lock', () => {
    const job = firstJob();
    const ran = runAsCron(job, cronEnv(job, localBin(true)));
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('synced with fence 1\n');
    expect(ran.status).toBe(0);
  });

  test("without the crontab's PATH line, cron's own PATH finds no dlock (127)", () => {
    const job = firstJob();
    const ran = runAsCron({ ...job, env: { DLOCK_REDIS_URL: 'x' } }, cronEnv({ ...job, env: {} }, localBin(true)));
    expect(ran.status).toBe(127);
    expect(ran.stderr).toMatch(/dlock: not found/);
  });

  // The npm build's bin/dlock runs node: without it on the crontab's PATH the job is 127. The
  // binary needs no node, and runs the job there.
  test(`dlock on the crontab's PATH but not node: ${BINARY ? 'the binary runs the job' : 'the npm build is 127'}`, () => {
    const job = firstJob();
    const env = cronEnv(job, localBin(false));
    env.PATH = env.PATH.split(':')[0];
    const ran = runAsCron(job, env);
    if (BINARY) {
      expect(ran.stdout).toMatch(/^synced with fence \d+\n$/);
      expect(ran.status).toBe(0);
    } else {
      expect(ran.status).toBe(127);
      expect(ran.stderr).toMatch(/node: not found/);
    }
  });
});

/** Every YAML block of docs/guides/ci.md, parsed by PyYAML (no YAML parser in node_modules). */
function ciPipelines(): { where: string; doc: Record<string, unknown> }[] {
  const blocks = blocksOf('docs/guides/ci.md', readFileSync(join(ROOT, 'docs/guides/ci.md'), 'utf8')).filter(
    (block) => block.lang === 'yaml',
  );
  return blocks.map((block) => {
    const parsed = spawnSync(
      'python3',
      ['-c', 'import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'],
      { input: block.body, encoding: 'utf8' },
    );
    if (parsed.status !== 0) throw new Error(`${block.file}:${block.line}: not YAML:\n${parsed.stderr}`);
    return { where: `${block.file}:${block.line}`, doc: JSON.parse(parsed.stdout) as Record<string, unknown> };
  });
}

type Step = { uses?: string; run?: string; with?: Record<string, string>; env?: Record<string, string> };
type GitHubJob = {
  needs?: string | string[];
  outputs?: Record<string, string>;
  steps: Step[];
  env?: Record<string, string>;
};

describe('CI pipelines of docs/guides/ci.md (parsed with python3 -c "import yaml")', () => {
  test('every pipeline parses; GitHub jobs check out the repository, install dlock, name Redis where they run it', () => {
    const problems: string[] = [];
    for (const { where, doc } of ciPipelines()) {
      const jobs = doc.jobs as Record<string, GitHubJob> | undefined;
      if (!jobs) continue;
      for (const [name, job] of Object.entries(jobs)) {
        let checkedOut = false;
        for (const step of job.steps) {
          const env = { ...(doc.env as object), ...job.env, ...step.env };
          if (step.uses?.startsWith('actions/checkout@')) checkedOut = true;
          if (step.run?.includes('ci/install-dlock.sh')) {
            if (!checkedOut) problems.push(`${where} ${name}: runs ci/install-dlock.sh before actions/checkout`);
            if (!('DLOCK_BASE' in env)) problems.push(`${where} ${name}: ci/install-dlock.sh without DLOCK_BASE`);
          }
          if (/(^|\s)dlock\s/.test(step.run ?? '') && !('DLOCK_REDIS_URL' in env))
            problems.push(`${where} ${name}: runs dlock without DLOCK_REDIS_URL`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test('GitLab jobs that run dlock install it first (their own before_script, or default:)', () => {
    const problems: string[] = [];
    for (const { where, doc } of ciPipelines()) {
      if (doc.jobs || doc.apiVersion) continue;
      const fallback = (doc.default as { before_script?: string[] } | undefined)?.before_script ?? [];
      for (const [name, job] of Object.entries(doc)) {
        const { script, before_script: before = fallback } = job as { script?: string[]; before_script?: string[] };
        if (!Array.isArray(script) || !script.some((line) => /(^|[\s(])dlock\s/.test(line))) continue;
        if (!before.some((line) => line.includes('ci/install-dlock.sh')))
          problems.push(`${where} ${name}: runs dlock without ci/install-dlock.sh`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('the multi-job workflow hands the token on as an artifact, not as a job output (masked: dropped)', () => {
    const workflow = ciPipelines().find(({ doc }) => {
      const jobs = doc.jobs as Record<string, GitHubJob> | undefined;
      return (
        jobs && Object.values(jobs).some((job) => job.steps.some((s) => /dlock (renew|release)/.test(s.run ?? '')))
      );
    });
    expect(workflow).toBeDefined();
    const jobs = workflow!.doc.jobs as Record<string, GitHubJob>;
    const text = JSON.stringify(jobs);
    // GitHub drops a job output that holds a masked value: later jobs would get "" (64).
    expect(text).not.toMatch(/outputs\.token/);
    const uploaded = new Map<string, string>();
    for (const [name, job] of Object.entries(jobs))
      for (const step of job.steps)
        if (step.uses?.startsWith('actions/upload-artifact@')) uploaded.set(step.with!.name, name);
    for (const [name, job] of Object.entries(jobs)) {
      const needs = [job.needs ?? []].flat();
      const downloads = job.steps.filter((s) => s.uses?.startsWith('actions/download-artifact@'));
      const usesToken = job.steps.some((s) => /dlock (renew|release)/.test(s.run ?? ''));
      if (!usesToken) continue;
      expect(downloads.length, `${name} downloads the token`).toBe(1);
      const from = uploaded.get(downloads[0].with!.name);
      expect(from && needs.includes(from), `${name} needs the job that uploads it`).toBe(true);
      // It sources the file the lock job wrote before renewing or releasing by it.
      const lockFile = /> (\S+)/.exec(jobs[from!].steps.find((s) => /dlock acquire/.test(s.run ?? ''))!.run!)![1];
      for (const step of job.steps.filter((s) => /dlock (renew|release)/.test(s.run ?? '')))
        expect(step.run).toMatch(new RegExp(`\\. \\./${lockFile.replace('.', '\\.')}`));
    }
  });
});
