// --ping-output: the command's stdout and stderr pass through dlock (pipes, each copied to
// dlock's own at once, with its backpressure, bytes unchanged) while the last `size` bytes of both,
// in the order they came, are kept in a ring buffer for the final ping's body (healthchecks shows
// it as the run's log, as runitor sends it). Loaded only with --ping-output.

import type { Readable, Writable } from 'node:stream';
import type { OutputCapture } from '../child/spawn.js';

export class OutputTail implements OutputCapture {
  private readonly ring: Buffer;
  /** Where the oldest byte kept is, and how many are kept. */
  private start = 0;
  private length = 0;
  /** More came than the ring holds: the first bytes kept may be the middle of a character. */
  private cut = false;
  private readonly ends: Promise<void>[] = [];

  constructor(readonly size: number) {
    this.ring = Buffer.alloc(size);
  }

  /**
   * Copy `from` (the command's stdout or stderr) to `to` (dlock's) and keep its tail. When `to`
   * fails (the reader went away), `from` is closed: the command's next write fails, as it
   * would have on the descriptor itself.
   */
  tee(from: Readable, to: Writable): void {
    from.on('data', (chunk: Buffer) => this.keep(chunk));
    from.pipe(to, { end: false });
    to.on('error', () => {
      from.unpipe(to);
      from.destroy();
    });
    this.ends.push(new Promise<void>((resolve) => from.once('close', () => resolve())));
  }

  /** Resolves when every stream teed has ended (the command and what it left running are gone), or at `bound`. */
  async ended(bound: Promise<void>): Promise<void> {
    await Promise.race([Promise.all(this.ends), bound]);
  }

  /** The bytes kept, oldest first; a character cut at the start is left out. */
  bytes(): Buffer {
    const end = this.start + this.length;
    const kept =
      end <= this.size
        ? this.ring.subarray(this.start, end)
        : Buffer.concat([this.ring.subarray(this.start), this.ring.subarray(0, end - this.size)]);
    if (!this.cut) return kept;
    let skip = 0;
    while (skip < 3 && skip < kept.length && (kept[skip] & 0xc0) === 0x80) skip++;
    return kept.subarray(skip);
  }

  private keep(chunk: Buffer): void {
    const { size } = this;
    if (chunk.length >= size) {
      chunk.copy(this.ring, 0, chunk.length - size);
      [this.start, this.length, this.cut] = [0, size, true];
      return;
    }
    const at = (this.start + this.length) % size;
    const first = Math.min(chunk.length, size - at);
    chunk.copy(this.ring, at, 0, first);
    if (first < chunk.length) chunk.copy(this.ring, 0, first);
    if (this.length + chunk.length > size) {
      this.start = (at + chunk.length) % size;
      this.length = size;
      this.cut = true;
    } else this.length += chunk.length;
  }
}
