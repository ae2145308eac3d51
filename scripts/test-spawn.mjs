// npm run test:spawn: every project that starts dlock, and the binary pass (test/binary-pass.ts), in
// two vitest runs side by side. The main run has the two workers the 2-core machines fit; the files
// of IDLE_LANE, which spend their time waiting (a 60 s status period, the chaos smoke's timed
// phases), run in a lane of their own, so the main run's workers are not held up by them. The idle
// lane's output is printed when both are done; the exit status is the first failing lane's.
//
//   node scripts/test-spawn.mjs [vitest options…]   (passed to both runs)

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const projects = ['cli', 'topology', 'hostile', 'slow', 'binary'].flatMap((name) => ['--project', name]);
const extra = process.argv.slice(2);

function lane(name, stdio) {
  const child = spawn(process.execPath, [vitest, 'run', ...projects, ...extra], {
    cwd: root,
    env: { ...process.env, DLOCK_BINARY_PASS: '1', DLOCK_TEST_LANE: name },
    stdio: ['ignore', stdio, stdio],
  });
  let output = '';
  if (stdio === 'pipe') {
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
  }
  const done = new Promise((resolve) =>
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output: () => output })),
  );
  return { child, done };
}

const idle = lane('idle', 'pipe');
const main = lane('main', 'inherit');
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    idle.child.kill(signal);
    main.child.kill(signal);
  });
}
const mainResult = await main.done;
const idleResult = await idle.done;
process.stdout.write(`\n== the idle lane (test/binary-pass.ts, IDLE_LANE) ==\n${idleResult.output()}`);
process.exit(mainResult.code || idleResult.code);
