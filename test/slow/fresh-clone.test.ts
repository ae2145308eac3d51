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
// Also the ways try.sh stops at once: the port taken by a Redis with a password or by something
// else (a listener this test starts), a remote URL with no Redis; and Node.js older than 20.19 for
// try.sh and .ci/run, with stand-ins for node, apt-cache, apt-get, sudo and npm first on PATH.

import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort, RedisServer } from '../../support/redis-server.mjs';
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

/** A user's shell: no DLOCK_* settings, and none of the npm_* variables `npm test` sets for its
 * scripts (npm_config_prefix and the like must not steer the clone's npm ci at this checkout). */
function userEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const user = Object.entries(process.env).filter(
    ([name]) => !name.startsWith('DLOCK_') && !/^npm_/i.test(name) && name !== 'INIT_CWD',
  );
  return {
    ...Object.fromEntries(user),
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    ...extra,
  };
}

/** A directory of stand-ins put first on PATH: `node` of the given version, `apt-cache` offering
 * nodejs `candidate`, and apt-get, sudo and npm that only write down that they were called (and
 * fail but for `apt-get update`, so that nothing goes further: .ci/run must never get to run the suite here). */
function fakeTools(nodeVersion: string, candidate: string): { path: string; calls: string } {
  const dir = mkdtempSync(join(work, 'fake-bin-'));
  const calls = join(dir, 'calls');
  const tool = (name: string, body: string): void => {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, name), 0o755);
  };
  tool('node', `[ "$1" = --version ] && { echo ${nodeVersion}; exit 0; }; exit 1`);
  tool('apt-cache', `echo 'nodejs:'; echo '  Installed: (none)'; echo '  Candidate: ${candidate}'`);
  // apt-get update succeeds, so that the install is tried (and written down).
  const update = (name: string): string => (name === 'apt-get' ? 'case "$*" in *update*) exit 0;; esac; ' : '');
  for (const name of ['apt-get', 'sudo', 'npm']) tool(name, `echo "${name} $*" >> '${calls}'; ${update(name)}exit 1`);
  return { path: `${dir}:${process.env.PATH}`, calls };
}

const NODE_ADVICE =
  /^[^\n]*dlock needs Node\.js >= 20\.19 \(this has v18\.19\.1\)[^\n]*Debian 13 and Ubuntu 25\.04\+[^\n]*apt-get install nodejs npm[^\n]*nvm or NodeSource[^\n]*docs\/install\.md[^\n]*\n$/;

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
  const env = userEnv({ DLOCK_REDIS_URL: `redis://127.0.0.1:${port}` });
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

// Port taken by something that is not a Redis answering PING: said at once, no second server.
// (After the test above: the clone is set up, so these get to step 3 in a second or two.)
test('try.sh, a Redis with a password on the port: says to put the password in DLOCK_REDIS_URL', async () => {
  const server = await RedisServer.start({ args: ['--requirepass', 'sekret'] });
  try {
    const run = await bash('bash scripts/try.sh', userEnv({ DLOCK_REDIS_URL: server.url }));
    expect(run.code).not.toBe(0);
    expect(run.stdout).not.toMatch(/started redis-server/);
    expect(run.stderr).toBe(
      `try.sh: a Redis on 127.0.0.1:${server.port} wants a password: ` +
        `set DLOCK_REDIS_URL=redis://:PASSWORD@127.0.0.1:${server.port}\n`,
    );
  } finally {
    await server.close();
  }
}, 60_000);

test("try.sh, something else on the port: says it is not a Redis, with redis-cli's error", async () => {
  const http = createServer((socket) => socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n')));
  const busy = await freePort();
  await new Promise<void>((resolve) => http.listen(busy, '127.0.0.1', resolve));
  try {
    const run = await bash('bash scripts/try.sh', userEnv({ DLOCK_REDIS_URL: `redis://127.0.0.1:${busy}` }));
    expect(run.code).not.toBe(0);
    expect(run.stdout).not.toMatch(/started redis-server/);
    expect(run.stderr).toMatch(
      new RegExp(
        `^try\\.sh: something on 127\\.0\\.0\\.1:${busy} is not a Redis that answers PING ` +
          `\\(.*Protocol error.*\\): set DLOCK_REDIS_URL to a Redis\\n$`,
      ),
    );
  } finally {
    http.close();
  }
}, 60_000);

test("try.sh, a remote URL no Redis answers at: names it, password masked, and redis-cli's error", async () => {
  const free = await freePort();
  const url = `redis://me:sekret@127.0.0.2:${free}`;
  const run = await bash('bash scripts/try.sh', userEnv({ DLOCK_REDIS_URL: url }));
  expect(run.code).not.toBe(0);
  expect(run.stderr).not.toMatch(/sekret/);
  expect(run.stderr).toMatch(
    new RegExp(
      `^try\\.sh: no Redis answers at redis://me:\\*\\*\\*@127\\.0\\.0\\.2:${free} \\(.*Connection refused\\)`,
    ),
  );
}, 60_000);

// Node older than 20.19 (Debian 12's and Ubuntu 24.04's apt have 18): checked before anything is
// installed; apt's nodejs is installed only when its candidate is new enough.
test('try.sh, Node 18 and apt offering 18: one line of advice, nothing installed', async () => {
  const fake = fakeTools('v18.19.1', '18.19.1+dfsg-6ubuntu5');
  const run = await bash('bash scripts/try.sh', userEnv({ PATH: fake.path }));
  expect(run.code).not.toBe(0);
  expect(run.stderr).toMatch(NODE_ADVICE);
  expect(existsSync(fake.calls) ? readFileSync(fake.calls, 'utf8') : '').toBe('');
});

test('try.sh, Node 18 and apt offering 20.19: installs nodejs from apt', async () => {
  const fake = fakeTools('v18.19.1', '20.19.2+dfsg-1');
  const run = await bash('bash scripts/try.sh', userEnv({ PATH: fake.path }));
  expect(run.code).not.toBe(0); // the stand-in apt-get fails
  expect(readFileSync(fake.calls, 'utf8')).toMatch(/^apt-get .*install .*nodejs/m);
});

test('.ci/run, Node 18 and apt offering 18: the same line at once, nothing installed or run', async () => {
  const fake = fakeTools('v18.19.1', '18.19.1+dfsg-6~deb12u2');
  const run = await bash('bash .ci/run', userEnv({ PATH: fake.path }));
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(NODE_ADVICE);
  expect(existsSync(fake.calls) ? readFileSync(fake.calls, 'utf8') : '').toBe('');
});

test('the second command names a bash script of the repository (CI runs it)', () => {
  const [, second] = setUpCommands().commands;
  const script = /^(?:sudo )?bash (\S+)/.exec(second)?.[1];
  expect(script, second).toBeDefined();
  expect(existsSync(join(clone, script!))).toBe(true);
  expect(spawnSync('bash', ['-n', join(clone, script!)]).status).toBe(0);
});
