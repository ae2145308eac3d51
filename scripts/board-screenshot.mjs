// docs/images/board.png: the board (dlock serve) of a real redis-server with sample locks, as
// Debian's chromium shows it (puppeteer-core, no browser download). Run after `npm run build`:
//   node scripts/board-screenshot.mjs [out.png]
// A held deploy with a line (newest wins with --supersede, a hotfix with --priority), a freeze with a
// reason queued behind it (dlock hold), a staging freeze, a report job on --slots 3, a migration
// under --max-hold and --heartbeat, and a nightly backup done for the day (--once-per), named so
// the board shows it free.

import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';
import { freePort, RedisServer } from '../support/redis-server.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DLOCK = join(ROOT, 'bin/dlock');
const out = process.argv[2] ?? join(ROOT, 'docs/images/board.png');
const chromium = process.env.DLOCK_CHROMIUM ?? '/usr/bin/chromium';

const redis = await RedisServer.start();
const dir = mkdtempSync(join(tmpdir(), 'dlock-board-'));
const children = [];
/** `dlock <args>` in the scripts' directory; resolves once stderr says `ready` (or at exit when none). */
function dlock(args, ready) {
  const child = spawn(DLOCK, args, {
    cwd: dir,
    env: { ...process.env, DLOCK_REDIS_URL: redis.url, DLOCK_LOG_FORMAT: 'json' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (data) => {
      stderr += data;
      if (ready && stderr.includes(ready)) resolve(child);
    });
    child.on('exit', (code) => (ready ? reject(new Error(`dlock ${args.join(' ')}: ${code} ${stderr}`)) : resolve()));
  });
}

try {
  for (const name of ['deploy.sh', 'report.sh', 'migrate.sh', 'backup.sh']) {
    const sleep = name === 'backup.sh' ? 'exit 0' : 'exec sleep 600';
    writeFileSync(join(dir, name), `#!/bin/sh\n${sleep}\n`);
    chmodSync(join(dir, name), 0o755);
  }
  await dlock(['run', '--once-per', '24h', 'nightly-backup', '--', './backup.sh', '--full']);
  await dlock(['run', '-t', '2m', 'deploy-prod', '--', './deploy.sh', 'v4.2.1'], '"acquired"');
  for (const version of ['v4.2.2', 'v4.2.3'])
    await dlock(['run', '-t', '2m', '--supersede', 'deploy-prod', '--', './deploy.sh', version], '"waiting"');
  await dlock(
    ['run', '-t', '2m', '--priority', '10', 'deploy-prod', '--', './deploy.sh', 'hotfix-4.2.1a'],
    '"waiting"',
  );
  const freeze = ['hold', '--wait', '1h', '--reason', 'release 4.3 freeze', '--for', '4h', 'deploy-prod'];
  await dlock(freeze, '"waiting"');
  await dlock(['hold', '--reason', 'load test until the evening', '--until', '18:00', 'deploy-staging']);
  for (const region of ['eu', 'us'])
    await dlock(['run', '--slots', '3', 'report-workers', '--', './report.sh', region], '"acquired"');
  // A short lease: its first renewal (ttl/3) stores --max-hold and the heartbeat for the board.
  const bounds = ['-t', '3s', '--max-hold', '30m', '--heartbeat', '5m'];
  await dlock(['run', ...bounds, 'db-migrate', '--', './migrate.sh', '--to', '2026_12'], '"acquired"');

  const port = await freePort();
  await dlock(['serve', '--listen', String(port), 'nightly-backup'], 'serving the board');
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900, deviceScaleFactor: 1 });
    await page.emulateTimezone('Europe/Berlin');
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForSelector('section.lock[data-key="deploy-prod"] table.line tbody tr:nth-child(3)');
    await page.waitForSelector('section.lock[data-key="deploy-staging"] td.c-reason');
    await page.waitForSelector('section.lock[data-key="db-migrate"] td.c-max-hold');
    await page.screenshot({ path: out, fullPage: true });
    console.log(`wrote ${out}`);
  } finally {
    await browser.close();
  }
} finally {
  for (const child of children) child.kill('SIGKILL');
  await redis.close();
  rmSync(dir, { recursive: true, force: true });
}
