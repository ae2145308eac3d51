// Docs that run: every shell example in README.md, docs/install.md and docs/guides is a transcript run against a
// real redis-server in the shell its block names (test/helpers/transcript.ts), or is marked
// `<!-- not run: reason -->` and parse-checked; those of docs/operations/etcd.md run against a real
// etcd member instead (DLOCK_REDIS_URL its etcd:// URL, etcdctl pointed at it). Also: links between the docs resolve, the README
// stays short, and `dlock --version` is the CHANGELOG's latest version.

import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import type { RedisServer } from '../../support/redis-server.mjs';
import { cleanEnv, dlock, DLOCK } from '../helpers/cli.js';
import type { EtcdServer } from '../../support/etcd-server.mjs';
import { useEtcdServer } from '../helpers/etcd.js';
import { useRedisServer } from '../helpers/server.js';
import { tempDir } from '../fixtures/observe.js';
import {
  blocksOf,
  commandsOf,
  differences,
  parseCheck,
  parseTranscript,
  runTranscript,
  shellOf,
  type Block,
  type Command,
  type Shell,
} from '../helpers/transcript.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** README.md and every page under docs/, as paths relative to the repository. */
function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
    );
  return ['README.md', ...walk('docs')];
}

const FILES = markdownFiles();
/** The pages whose transcripts run on etcd rather than Redis. */
const ETCD_FILES = ['docs/operations/etcd.md'];
const RUN_FILES = FILES.filter(
  (file) => ['README.md', 'docs/install.md', ...ETCD_FILES].includes(file) || file.startsWith('docs/guides/'),
);
const BLOCKS: Block[] = RUN_FILES.flatMap((file) => blocksOf(file, readFileSync(join(ROOT, file), 'utf8')));
const RUNNABLE = BLOCKS.filter((block) => block.lang === 'console' && !block.notRun);
const NOT_RUN = BLOCKS.filter((block) => block.notRun);

let redis: RedisServer;
// Each session gets a database of its own, so transcripts run side by side and start from nothing.
useRedisServer((server) => (redis = server), { args: ['--databases', '200'] });
let databases = 0;
let etcd: EtcdServer;
useEtcdServer((server) => (etcd = server));

/**
 * A directory to run a transcript in, and an environment whose `dlock` is the one under test: on a
 * Redis database of its own, or for the etcd pages on the etcd member (their lock names differ
 * from block to block, and each block releases what it takes), with etcdctl pointed at it.
 */
function session(block?: Block): { cwd: string; env: NodeJS.ProcessEnv } {
  const cwd = tempDir();
  const bin = join(cwd, '.bin');
  const runtime = join(cwd, '.runtime');
  mkdirSync(bin);
  mkdirSync(runtime);
  chmodSync(runtime, 0o700);
  symlinkSync(DLOCK, join(bin, 'dlock'));
  const store: Record<string, string> =
    block && ETCD_FILES.includes(block.file)
      ? { DLOCK_REDIS_URL: etcd.url, ETCDCTL_API: '3', ETCDCTL_ENDPOINTS: etcd.endpoint }
      : { DLOCK_REDIS_URL: `${redis.url}/${++databases}` };
  const env = cleanEnv({
    PATH: `${bin}:${process.env.PATH}`,
    HOME: cwd,
    XDG_RUNTIME_DIR: runtime,
    LC_ALL: 'C.UTF-8',
    ...store,
  });
  for (const name of Object.keys(env)) if (/^ETCDCTL_/.test(name) && !(name in store)) delete env[name];
  return { cwd, env };
}

describe('transcripts in README.md, docs/guides and docs/operations/etcd.md', () => {
  test('there are transcripts, and every block is a transcript, output, or marked not run', () => {
    expect(RUNNABLE.length).toBeGreaterThan(10);
    const unmarked = BLOCKS.filter((block) => !['console', 'text'].includes(block.lang) && !block.notRun);
    expect(unmarked.map((block) => `${block.file}:${block.line} (${block.lang || 'no language'})`)).toEqual([]);
    const commands = RUNNABLE.flatMap((block) => parseTranscript(block.body)).length;
    console.log(`docs: ${RUNNABLE.length} transcripts (${commands} commands) run, ${NOT_RUN.length} blocks not run`);
  });

  const runnable = RUNNABLE.map((block) => [`${block.file}:${block.line} (${shellOf(block)})`, block] as const);
  test.each(runnable)('%s', async (_, block) => {
    const commands = parseTranscript(block.body);
    const actual = await runTranscript(commands, shellOf(block), session(block));
    expect(differences(commands, actual)).toBe('');
  });

  const notRun = NOT_RUN.map((block) => [`${block.file}:${block.line}: ${block.notRun}`, block] as const);
  test.each(notRun)('%s: commands parse', (_, block) => {
    // CI YAML, Jenkins and unit files run their lines with bash; crontab lines and sh blocks with sh.
    const posix = block.lang === 'sh' || block.lang === 'cron';
    const shell: Shell = block.lang === 'console' ? shellOf(block) : posix ? 'sh' : 'bash';
    const commands = commandsOf(block);
    expect(commands.length).toBeGreaterThan(0);
    expect(commands.map((text) => parseCheck(text, shell)).filter(Boolean)).toEqual([]);
  });
});

describe('the harness fails when documented output changes', () => {
  const failsVisibly = (command: Command) => command.status !== 0 && command.expected.length > 0;
  const block = RUNNABLE.find((b) => parseTranscript(b.body).some(failsVisibly))!;

  test('a changed output line, or a changed exit status, is reported', async () => {
    const commands = parseTranscript(block.body);
    const failing = commands.findIndex(failsVisibly);
    const lastLineChanged = (c: Command) => ({ ...c, expected: [...c.expected.slice(0, -1), `${c.expected.at(-1)}!`] });
    const changedLine = commands.map((c, i) => (i === failing ? lastLineChanged(c) : c));
    const changedStatus = commands.map((c, i) => (i === failing ? { ...c, status: c.status + 1 } : c));
    const check = async (documented: Command[]) =>
      differences(documented, await runTranscript(documented, shellOf(block), session()));
    expect(await check(commands)).toBe('');
    expect(await check(changedLine)).toContain('documented:');
    expect(await check(changedStatus)).toContain(`documented ${commands[failing].status + 1}`);
  });

  test('no transcript is all placeholders: each pins some output or exit status', () => {
    const literal = (line: string) => line !== '...' && line.replace(/\[\.\.\]/g, '').trim() !== '';
    const vague = RUNNABLE.filter((b) => {
      const commands = parseTranscript(b.body);
      return !commands.some((command) => command.status !== 0 || command.expected.some(literal));
    });
    expect(vague.map((b) => `${b.file}:${b.line}`)).toEqual([]);
  });

  test('a not-run block with a shell syntax error is reported', () => {
    expect(parseCheck('if true; then echo', 'sh')).not.toBe('');
    expect(parseCheck('if true; then echo; fi', 'sh')).toBe('');
  });
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a markdown file's headings (outside code blocks). */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = /^#+ (.*)$/.exec(line);
    if (heading && !fenced) anchors.add(slug(heading[1]));
  }
  return anchors;
}

test('every link between the docs resolves, anchors included', () => {
  const broken: string[] = [];
  for (const file of FILES) {
    const text = readFileSync(join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [path, anchor] = target.split('#');
      const into = path ? relative(ROOT, resolve(dirname(join(ROOT, file)), path)) : file;
      let ok = existsSync(join(ROOT, into));
      if (ok && anchor && into.endsWith('.md')) ok = anchorsOf(into).has(anchor);
      if (!ok) broken.push(`${file}: ${target}`);
    }
  }
  expect(broken).toEqual([]);
});

test('README.md is at most 300 lines', () => {
  expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(300);
});

test("dlock --version is the CHANGELOG's latest version", async () => {
  const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
  const latest = /^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/m.exec(changelog);
  expect(latest).not.toBeNull();
  const result = await dlock(['--version']);
  expect(result.stdout).toBe(`${latest![1]}\n`);
});
