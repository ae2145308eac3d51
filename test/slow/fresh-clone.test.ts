// The README's two set-up commands, from a fresh clone (issue 32, "Two commands from a fresh clone"):
// a `git clone` of this repository's HEAD into a temporary directory (no node_modules, no dist/,
// nothing from the working tree), then the README's first command exactly as the README writes it
// (read from the clone's README.md, never copied: commit a change before running this), twice: it must set up, run the demo, and be idempotent.
// Its packages are installed already on this machine, so apt-get is not run; `npm ci` is, from
// the npm cache (npm_config_prefer_offline: seconds). dlock's default URL is pointed at a free
// loopback port with DLOCK_REDIS_URL, which the command honours as dlock does, so it starts its
// own redis-server there (as it would on 6379) without touching a server of this machine; the
// test stops that server afterwards (a user's stays running, as the command says).
// The second command (`bash .ci/run`) installs packages and runs the whole suite (tens of
// minutes): here only checked to name a bash script that exists; CI runs it itself.
// npm-only by nature: the command builds and runs the clone's bin/dlock, DLOCK_BIN or not.

import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort } from '../../support/redis-server.mjs';
import { blocksOf } from '../helpers/transcript.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'dlock-fresh-clone-'));
const clone = join(work, 'dlock');
/** Lines of the README a terminal shows first: the two commands must be among them. */
const FIRST_SCREEN = 50;

/** The README's block with the two commands: the one whose not-run mark names this test. */
function setUpCommands(): { line: number; commands: string[] } {
  const block = blocksOf('README.md', readFileSync(join(clone, 'README.md'), 'utf8')).find((b) =>
    b.notRun?.includes('test/slow/fresh-clone.test.ts'),
  );
  if (!block) throw new Error('README.md has no block marked `<!-- not run: … test/slow/fresh-clone.test.ts … -->`');
  return { line: block.line, commands: block.body.split('\n').filter((line) => line.trim() !== '') };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function bash(command: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile('bash', ['-c', command], { cwd: clone, env, encoding: 'utf8' }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

let port: number;
let started: number | undefined;
beforeAll(async () => {
  port = await freePort();
  const cloned = spawnSync('git', ['clone', '--quiet', ROOT, clone], { encoding: 'utf8' });
  if (cloned.status !== 0) throw new Error(`git clone failed: ${cloned.stderr}`);
});
afterAll(() => {
  // The redis-server the command started (a user's stays running): by its pid, else by its port.
  try {
    if (started) process.kill(started, 'SIGKILL');
    else if (port) spawnSync('redis-cli', ['-p', String(port), 'shutdown', 'nosave'], { timeout: 5_000 });
  } catch {
    // already gone
  }
  rmSync(work, { recursive: true, force: true });
});

test('the README shows the two set-up commands on its first screen', () => {
  const { line, commands } = setUpCommands();
  expect(line).toBeLessThanOrEqual(FIRST_SCREEN);
  expect(commands).toHaveLength(2);
});

test('the first command sets up a fresh clone and runs the demo under a lock, and again', async () => {
  const [first] = setUpCommands().commands;
  // A user's shell: no DLOCK_* settings, and none of the npm_* variables `npm test` sets for its
  // scripts (npm_config_prefix and the like must not steer the clone's npm ci at this checkout).
  const user = Object.entries(process.env).filter(
    ([name]) => !name.startsWith('DLOCK_') && !/^npm_/i.test(name) && name !== 'INIT_CWD',
  );
  const env = {
    ...Object.fromEntries(user),
    DLOCK_REDIS_URL: `redis://127.0.0.1:${port}`,
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  };
  const once = await bash(first, env);
  expect(once.stderr + once.stdout).toMatch(/started redis-server on 127\.0\.0\.1:\d+ \(pid \d+\)/);
  started = Number(/\(pid (\d+)\)/.exec(once.stdout + once.stderr)?.[1]);
  expect(once, once.stderr).toMatchObject({ code: 0 });
  expect(once.stdout).toMatch(/dlock works: .*fencing token 1\n/);
  expect(existsSync(join(clone, 'node_modules'))).toBe(true);

  // Idempotent: nothing to install, the server it started answers, the demo runs again.
  const twice = await bash(first, env);
  expect(twice, twice.stderr).toMatchObject({ code: 0 });
  expect(twice.stdout + twice.stderr).not.toMatch(/started redis-server/);
  expect(twice.stdout).toMatch(/dlock works: .*fencing token 2\n/);
}, 120_000);

test('the second command names a bash script of the repository (CI runs it)', () => {
  const [, second] = setUpCommands().commands;
  const script = /^(?:sudo )?bash (\S+)/.exec(second)?.[1];
  expect(script, second).toBeDefined();
  expect(existsSync(join(clone, script!))).toBe(true);
  expect(spawnSync('bash', ['-n', join(clone, script!)]).status).toBe(0);
});
