'use strict';
// Entry of the standalone executable (scripts/build-binary.mjs compiles it with Bun, together
// with dist/dlock.cjs). It does for the binary what the sh prologue of bin/dlock does for the npm
// build: list the caller's descriptors 3 and up (make's jobserver pipe, `3>file`) so that
// src/child/inherited-fds.ts hands exactly these to the command. Bun marks inherited descriptors 4 and
// up close-on-exec before any JavaScript runs, and has opened its event loop's epoll and eventfd
// by then; it has opened nothing else. So the list is /proc/self/fd now, minus those two kinds
// (a caller's own epoll or eventfd would not be passed on) and minus the listing's own descriptor.

// `dlock --version` alone: the version of the package.json the build compiled in (Bun inlines the
// JSON), without loading anything (the bundle did the same, ~12 ms later). console.log: a closed or
// broken stdout only loses the line, as in src/output.ts, and it needs no stream set up.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  console.log(require('../package.json').version);
  return;
}

// `dlock heartbeat` first, without loading the rest of dlock (src/entry.ts does the same for the
// bundle): the Bun runtime's own start is then most of its cost (docs/performance.md).
if (process.argv[2] === 'heartbeat') {
  const code = require('../dist/beat.cjs').heartbeatFastPath(process.argv.slice(2), process.env);
  if (code !== undefined) {
    process.exitCode = code;
    return;
  }
}

// A caller that ignores SIGCHLD (`trap '' CHLD`, inherited across exec) makes the kernel reap
// dlock's children itself, and Bun's wait for the command then fails (ECHILD: exit 70 whatever the
// command returned). A handler of our own puts the default reaping back, as Node's libuv does
// (coreutils' timeout tests the same: "immune to parent's SIGCHLD handler").
process.on('SIGCHLD', () => {});

const { readdirSync, readlinkSync } = require('node:fs');

let fds = '';
try {
  for (const name of readdirSync('/proc/self/fd')) {
    const fd = Number(name);
    if (!(fd > 2)) continue;
    let target;
    try {
      target = readlinkSync(`/proc/self/fd/${name}`);
    } catch {
      continue; // the listing's own descriptor, closed again by now
    }
    if (target === 'anon_inode:[eventpoll]' || target === 'anon_inode:[eventfd]') continue;
    fds += ` ${fd}`;
  }
} catch {
  // No /proc: only stdin, stdout and stderr are passed on.
}
process.env.DLOCK_INHERITED_FDS = `${process.pid}:${fds}`;
require('../dist/dlock.cjs');
