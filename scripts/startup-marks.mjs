// Where `dlock run k -- true` spends its start-up, per build and per revision: each revision is
// checked out in a temporary git worktree, given timing marks (performance.now(), milliseconds since
// the process started) at fixed places of its source, built (bundle and binary), and run alternately
// against a throwaway redis-server; the table shows the median of each mark. The marks live only in
// those temporary copies: dlock itself carries none. docs/performance.md, "Start-up", shows a run.
//
//   node scripts/startup-marks.mjs [--runs 30] [--version] <rev>...   (e.g. main HEAD)
//
// A mark whose place a revision does not have is left out for that revision.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values, positionals } = parseArgs({
  options: { runs: { type: 'string', default: '30' }, version: { type: 'boolean' } },
  allowPositionals: true,
});
const revs = positionals.length > 0 ? positionals : ['HEAD'];

const MARK = (name) => `(globalThis as any).__mark?.('${name}');\n`;
const RECORDER =
  "globalThis.__marks=[];globalThis.__mark=(n)=>{if(process.env.DLOCK_MARKS)globalThis.__marks.push(n+' '+performance.now().toFixed(2))};" +
  "__mark('js starts');process.on('exit',()=>{__mark('exit event');if(process.env.DLOCK_MARKS)require('fs').writeSync(2,__marks.join('\\n')+'\\n')});\n";
// [file, text the mark goes before (or after, with `after`), mark]
const PLACES = [
  ['scripts/binary-main.cjs', "'use strict';\n", RECORDER, 'after'],
  ['bin/dlock', "'use strict';\n", RECORDER, 'after'],
  ['scripts/binary-main.cjs', "require('../dist/dlock.cjs');", "__mark('bundle required');"],
  ['bin/dlock', 'const script = new Script(', "__mark('code cache read');"],
  ['bin/dlock', 'script.runInThisContext()(', "__mark('bundle compiled');"],
  ['src/entry.ts', 'const code = heartbeatFastPath', MARK('bundle top level done')],
  ['src/main.ts', '  hideSecretsFromPs(argv);', MARK('main imports done')],
  ['src/main.ts', '    forEval = invocation.command', MARK('command line parsed')],
  ['src/commands/run.ts', '  const log = new Logger(config.verbosity', MARK('run command loaded')],
  ['src/backends/redis/client/create.ts', '  const [{ default: Redis, Cluster }', MARK('ioredis: import')],
  ['src/backends/redis/client/create.ts', '  installReplyGuard();', MARK('ioredis: loaded')],
  ['src/backends/redis/client/client.ts', '  let connectError: unknown;', MARK('client made')],
  ['src/backends/redis/client/client.ts', '    if (connectError) throw connectError;', MARK('connected + HELLO')],
  ['src/commands/run.ts', '    const slot = parent?.slot || undefined;', MARK('lock set open')],
  ['src/commands/run.ts', '    if (!hold) return interruptedStatus', MARK('acquired')],
  ['src/commands/run.ts', '      const bounded = config.maxHoldMs', MARK('command spawned')],
  ['src/commands/run.ts', '      return status;\n', MARK('command exited')],
  ['src/main.ts', '  await finishEventSinks(code);', MARK('released')],
];

const port = await freePort();
const redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
const trees = [];
try {
  for (const rev of revs) trees.push({ rev, dir: prepare(rev) });
  await waitForRedis(port);
  const args = values.version
    ? ['--version']
    : ['run', '--redis', `redis://127.0.0.1:${port}`, 'startup-marks', '--', 'true'];
  const runs = [];
  for (const { rev, dir } of trees) {
    runs.push({ label: `${rev} binary`, file: join(dir, 'dist/dlock-linux-x64'), marks: {}, walls: [] });
    runs.push({ label: `${rev} npm`, file: join(dir, 'bin/dlock'), marks: {}, walls: [] });
  }
  for (let i = 0; i < Number(values.runs); i++) {
    for (const run of runs) {
      const started = process.hrtime.bigint();
      const { stderr } = spawnSync(run.file, args, { env: { ...process.env, DLOCK_MARKS: '1' }, encoding: 'utf8' });
      run.walls.push(Number(process.hrtime.bigint() - started) / 1e6);
      for (const line of stderr.split('\n')) {
        const match = /^(.+) (\d+\.\d+)$/.exec(line);
        if (match) (run.marks[match[1]] ??= []).push(Number(match[2]));
      }
    }
  }
  for (const run of runs) {
    console.log(`\n${run.label} (${values.version ? '--version' : 'run k -- true'}, medians of ${values.runs} runs)`);
    let previous = 0;
    for (const [name, times] of Object.entries(run.marks)) {
      const at = median(times);
      console.log(`  ${name.padEnd(24)} ${at.toFixed(2).padStart(8)} ms  +${(at - previous).toFixed(2)}`);
      previous = at;
    }
    console.log(`  ${'wall, spawn to reaped'.padEnd(24)} ${median(run.walls).toFixed(2).padStart(8)} ms`);
  }
} finally {
  redis.kill('SIGKILL');
  for (const { dir } of trees) {
    spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: root });
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A built copy of `rev` with the marks in it. */
function prepare(rev) {
  const dir = mkdtempSync(join(tmpdir(), 'dlock-marks-'));
  rmSync(dir, { recursive: true });
  execFileSync('git', ['worktree', 'add', '--detach', dir, rev], { cwd: root, stdio: 'ignore' });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  for (const [file, anchor, text, where] of PLACES) {
    const path = join(dir, file);
    if (!existsSync(path)) continue;
    const source = readFileSync(path, 'utf8');
    if (!source.includes(anchor)) continue;
    writeFileSync(
      path,
      source.replace(anchor, () => (where === 'after' ? anchor + text : text + anchor)),
    );
  }
  execFileSync('npm', ['run', 'build:binary'], { cwd: dir, stdio: 'ignore' });
  return dir;
}

function median(list) {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function waitForRedis(port) {
  for (let i = 0; i < 100; i++) {
    if (spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout?.trim() === 'PONG') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('startup-marks: redis-server did not start');
}
