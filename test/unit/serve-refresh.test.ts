// The board's one read per interval (src/serve/refresh.ts): viewers who ask together share one
// read, a fresh reading is served without reading, a failure keeps the last good value and says
// since when, once; a success after it says so, once.

import { expect, test } from 'vitest';
import { Refreshing } from '../../src/serve/refresh.js';

/** A read whose answers the test gives one by one. */
function scripted() {
  const pending: { resolve: (value: number) => void; reject: (error: Error) => void }[] = [];
  const read = () => new Promise<number>((resolve, reject) => pending.push({ resolve, reject }));
  return { read, pending };
}

test('viewers asking while a read is under way share it; a fresh reading is served without a read', async () => {
  const { read, pending } = scripted();
  const board = new Refreshing(read, 60_000);
  const asked = [board.get(), board.get(), board.get()];
  expect(pending).toHaveLength(1);
  pending[0].resolve(7);
  const readings = await Promise.all(asked);
  expect(readings.map((reading) => reading.value)).toEqual([7, 7, 7]);
  expect((await board.get()).value).toBe(7);
  expect(pending).toHaveLength(1);
});

test('a failure keeps the last value and the time the failures began; the recovery clears it, each said once', async () => {
  const { read, pending } = scripted();
  const said: string[] = [];
  const board = new Refreshing(read, 0, {
    failing: (error) => said.push(`failing: ${(error as Error).message}`),
    recovered: () => said.push('recovered'),
  });
  const first = board.get();
  pending[0].resolve(1);
  expect(await first).toEqual({ value: 1, readAtMs: expect.any(Number) });

  const second = board.get();
  pending[1].reject(new Error('down'));
  const down = await second;
  expect(down).toMatchObject({ value: 1, failing: { error: new Error('down') } });
  const third = board.get();
  pending[2].reject(new Error('still down'));
  const still = await third;
  expect(still.value).toBe(1);
  expect(still.failing!.sinceMs).toBe(down.failing!.sinceMs);
  expect((still.failing!.error as Error).message).toBe('still down');

  const fourth = board.get();
  pending[3].resolve(2);
  expect(await fourth).toEqual({ value: 2, readAtMs: expect.any(Number) });
  expect(said).toEqual(['failing: down', 'recovered']);
});

test('nothing read yet and the first read fails: no value, the failure', async () => {
  const { read, pending } = scripted();
  const board = new Refreshing(read, 0);
  const first = board.get();
  pending[0].reject(new Error('refused'));
  const reading = await first;
  expect(reading.value).toBeUndefined();
  expect(reading.failing!.sinceMs).toBeGreaterThan(0);
});
