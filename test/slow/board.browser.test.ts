// The board in a real browser (issue 35, "must show"): Debian's chromium, headless, driven by
// puppeteer-core pointed at /usr/bin/chromium (no browser download), against a real
// redis-server and `dlock serve` spawned as a user runs it. A held lock (a real `dlock run`), a
// line of three waiters, and a forged holder whose command is markup: the DOM shows each as text
// in its place, the title stays, no dialog opens, nothing logs a CSP refusal or an error; when
// the holder ends, the page shows it gone within its refresh, timed from the release's own event. A
// lock's own page shows that lock alone; through a store outage the page keeps its data, marked
// stale, says since when, and shows fresh data once the store is back.

import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { Redis } from 'ioredis';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { events, hold, spawnDlock, type Held } from '../fixtures/observe.js';
import { inLine } from '../helpers/line.js';
import { dlock } from '../helpers/cli.js';
import { useRedisServer } from '../helpers/server.js';
import { freePort, type RedisServer } from '../../support/redis-server.mjs';

const CHROMIUM = process.env.DLOCK_CHROMIUM ?? '/usr/bin/chromium';
const XSS = `<script>document.title='owned'</script><img src=x onerror=alert(1)>`;
/** The page's refresh (src/commands/serve.ts REFRESH_MS): the store is read every half of it. */
const REFRESH_MS = 2000;

let redis: RedisServer;
let admin: Redis;
useRedisServer((server) => {
  redis = server;
  admin = server.client();
});

let browser: Browser;
beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium`);
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root (CI containers) has no user namespace sandbox for chromium.
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
});
afterAll(async () => {
  await browser?.close();
});

/** Everything the page said or opened that it should not have. */
function watch(page: Page) {
  const seen = { dialogs: [] as string[], console: [] as string[], errors: [] as string[] };
  page.on('dialog', (dialog) => {
    seen.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('console', (message) => seen.console.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => seen.errors.push(String(error)));
  return seen;
}

/** The rows of the table `table` (holders, line, history) in the card of `key`: each cell's text by its column. */
function rows(page: Page, key: string, table: string): Promise<Record<string, string>[]> {
  return page.$$eval(`section.lock[data-key="${key}"] table.${table} tbody tr`, (trs) =>
    trs.map((tr) =>
      Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.className.slice(2), td.textContent ?? ''])),
    ),
  );
}

test('a held lock, a line of three and forged holders, each as text in its place; a hold ends within a refresh; an outage', async () => {
  const held = hold('b-deploy', { redis: redis.url, flags: ['-t', '1m'] });
  await held.waitFor('"event":"acquired"');
  // A hold with a reason (a deploy freeze), an hour long.
  const frozen = await dlock([
    'hold',
    '--redis',
    redis.url,
    '--reason',
    'release 4.2 freeze',
    '--for',
    '1h',
    'b-freeze',
  ]);
  expect(frozen.code, frozen.stderr).toBe(0);
  // A line of three joining with priorities 0, 5 and 9: served 9, 5, 0.
  const joined: Held[] = [];
  for (const priority of ['0', '5', '9']) {
    const waiter = hold('b-deploy', { redis: redis.url, flags: ['-t', '1m', '--priority', priority] });
    await inLine(waiter);
    joined.push(waiter);
  }
  const waiters = [...joined].reverse();
  const since = Number(((await admin.call('TIME')) as string[])[0]) * 1000;
  await admin.hset('dlock:{b-forged}', {
    owner: 'forged',
    fence: '7',
    host: '<b>host</b>',
    pid: '1',
    cmd: XSS,
    since_ms: String(since),
    ttl_ms: '60000',
  });
  await admin.pexpire('dlock:{b-forged}', 60_000);
  // A huge forged field: cut where it is read (256 characters and how many more), then shown as text.
  await admin.hset('dlock:{b-huge}', { owner: 'forged', fence: '8', host: 'h'.repeat(100_000), pid: '1', cmd: 'x' });
  await admin.pexpire('dlock:{b-huge}', 60_000);

  const port = await freePort();
  const board = spawnDlock(['serve', '--redis', redis.url, '--listen', String(port)]);
  const url = `http://127.0.0.1:${port}/`;
  await board.waitFor(`serving the board on ${url}`);

  const page = await browser.newPage();
  const seen = watch(page);
  await page.goto(url);
  await page.waitForSelector('section.lock[data-key="b-deploy"] table.line tbody tr:nth-child(3)');
  expect(await page.title()).toBe('dlock board');

  // The holder: the real dlock run's host, pid and command.
  const holder = await rows(page, 'b-deploy', 'holders');
  const { pid } = await held.child();
  expect(holder).toHaveLength(1);
  expect(holder[0]).toMatchObject({ kind: 'exclusive', pid: String(held.process.pid), fence: '1' });
  expect(holder[0].command).toContain(held.dir);
  expect(pid).toBeGreaterThan(0);

  // The line, in order of service: place 1, 2, 3, each its waiter's priority, pid and command.
  const line = await rows(page, 'b-deploy', 'line');
  expect(line.map((row) => row.place)).toEqual(['1', '2', '3']);
  expect(line.map((row) => row.priority)).toEqual(['9', '5', '0']);
  expect(line.map((row) => row.pid)).toEqual(waiters.map((waiter) => String(waiter.process.pid)));
  line.forEach((row, i) => expect(row.command).toContain(waiters[i].dir));

  // The hold: its kind, reason, who and until when, in their cells.
  const [freeze] = await rows(page, 'b-freeze', 'holders');
  expect(freeze).toMatchObject({ kind: 'hold', reason: 'release 4.2 freeze', user: userInfo().username });
  expect(freeze.until).toMatch(/, (59m|1h)[^,]* left$/);

  // The forged holder: its markup is the text of the cells, and made no element.
  const forged = await rows(page, 'b-forged', 'holders');
  expect(forged[0]).toMatchObject({ host: '<b>host</b>', command: XSS, fence: '7' });
  expect(await page.$$eval('#locks img, #locks script, #locks b', (found) => found.length)).toBe(0);
  const [huge] = await rows(page, 'b-huge', 'holders');
  expect(huge.host).toBe(`${'h'.repeat(256)}…(${100_000 - 256} more)`);
  expect(await page.title()).toBe('dlock board');
  // The filter (client side): only the names that contain what is typed.
  await page.type('#filter', 'forged');
  expect(await page.$$eval('section.lock', (cards) => cards.map((card) => card.getAttribute('data-key')))).toEqual([
    'b-forged',
  ]);
  await page.$eval('#filter', (input) => {
    (input as unknown as { value: string }).value = '';
    input.dispatchEvent(new Event('input'));
  });

  // The holder ends: the page shows waiter 1 holding, and the old holder gone, within its refresh.
  held.stop();
  await held.result;
  const released = events(held.stderr(), 'released')[0].ts_ms as number;
  const cells = `section.lock[data-key="b-deploy"] table.holders td`;
  await page.waitForFunction(
    `![...document.querySelectorAll('${cells}')].some((td) => td.textContent.includes(${JSON.stringify(held.dir)}))`,
    { timeout: 10_000, polling: 'mutation' },
  );
  const goneAfter = Date.now() - released;
  console.log(`the holder's release → the page without it: ${Math.round(goneAfter)} ms (refresh ${REFRESH_MS} ms)`);
  // A page asks every refresh; the store is read every half refresh: 1.5 refreshes, and the read's own time.
  expect(goneAfter).toBeLessThan(REFRESH_MS * 1.5 + 1000);
  const after = await rows(page, 'b-deploy', 'holders');
  expect(after[0]).toMatchObject({ pid: String(waiters[0].process.pid), fence: '2' });
  expect((await rows(page, 'b-deploy', 'line')).map((row) => row.pid)).toEqual(
    waiters.slice(1).map((waiter) => String(waiter.process.pid)),
  );

  // Nothing from the data ran: no dialog, the title as it was, no CSP refusal, no error.
  expect(await page.title()).toBe('dlock board');
  expect(seen).toEqual({ dialogs: [], console: [], errors: [] });

  // A lock's own page: that lock alone, with its events.
  const own = await browser.newPage();
  const ownSeen = watch(own);
  await own.goto(`${url}lock/${encodeURIComponent('b-deploy')}`);
  await own.waitForSelector('section.lock[data-key="b-deploy"] table.history tbody tr');
  expect(await own.$$eval('section.lock', (cards) => cards.map((card) => card.getAttribute('data-key')))).toEqual([
    'b-deploy',
  ]);
  expect((await rows(own, 'b-deploy', 'history')).map((row) => row.event)).toContain('released');
  expect(ownSeen).toEqual({ dialogs: [], console: [], errors: [] });
  await own.close();

  // The store stops: the page keeps its data, marked stale, and says since when; then it recovers.
  await redis.stop();
  await page.waitForFunction(`document.getElementById('state').textContent.startsWith('store unreachable since ')`, {
    timeout: 10_000,
  });
  expect(await page.$eval('#state', (state) => state.className)).toBe('stale');
  expect(await page.$eval('#state', (state) => state.textContent)).toMatch(/\(stale\)$/);
  expect(await page.$$eval('section.lock', (cards) => cards.length)).toBeGreaterThan(0);
  await redis.launch();
  await page.waitForFunction(`document.getElementById('state').className === 'fresh'`, { timeout: 20_000 });
  expect(await page.$eval('#state', (state) => state.textContent)).toMatch(/^dlock: · updated /);
  // The 503s of the outage are the only console lines: the browser logs each failed fetch.
  expect(seen.console.every((line) => /status of 503/.test(line))).toBe(true);
  expect([seen.dialogs, seen.errors]).toEqual([[], []]);
  await page.close();
  for (const waiter of waiters) waiter.stop();
  board.process.kill('SIGTERM');
  expect((await board.result).code).toBe(0);
});
