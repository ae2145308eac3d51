// The fenced resource: a loopback TCP server that the children (chaos/client.sh) write to.
// It records every critical section (token, begin, "still alive" ticks, write, end) and, as a
// fencing-aware storage would, REJECTS a write whose token is lower than the highest token it
// has accepted. It cannot tell two holders with the same token apart: such a write is
// accepted, and the analysis counts it as a stale write accepted (a rolled-back counter).

import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { wallMs } from './procs.mjs';

const usToMs = (text) => Number(text) / 1000;

export class FencedResource {
  constructor(chooseHoldMs) {
    this.chooseHoldMs = chooseHoldMs;
    /** run id → section */
    this.sections = new Map();
    /** Every write in the order the resource decided it. */
    this.writes = [];
    this.highest = undefined;
    this.victimRequest = undefined;
    /** Victims whose child writes only after a newer token has been written (awaitNewer). */
    this.awaiting = new Set();
    this.sockets = new Set();
    this.protocolErrors = [];
  }

  static async start(chooseHoldMs) {
    const resource = new FencedResource(chooseHoldMs);
    resource.server = createServer((socket) => resource.accept(socket));
    await new Promise((resolve, reject) => {
      resource.server.once('error', reject);
      resource.server.listen(0, '127.0.0.1', resolve);
    });
    resource.port = resource.server.address().port;
    return resource;
  }

  /**
   * The next critical section to begin holds for `holdMs` (a long job); resolves with it, or
   * undefined after `timeoutMs`. With `writeAfterNewer` its child holds at least `holdMs` and
   * then writes only once a write with a higher token has been accepted (at most `capMs`): the
   * paused holder's write is then certainly late, whatever the machine's load did to the others.
   */
  nextVictim(holdMs, timeoutMs, { writeAfterNewer = false, capMs = holdMs } = {}) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.victimRequest = undefined;
        resolve(undefined);
      }, timeoutMs);
      this.victimRequest = {
        holdMs,
        writeAfterNewer,
        capMs,
        begun: (section) => {
          clearTimeout(timer);
          this.victimRequest = undefined;
          resolve(section);
        },
      };
    });
  }

  accept(socket) {
    this.sockets.add(socket);
    socket.on('error', () => {});
    let section;
    const lines = createInterface({ input: socket });
    lines.on('error', () => {}); // a child killed mid-line resets its connection: nothing to record
    lines.on('line', (line) => {
      const [verb, ...args] = line.trim().split(' ');
      if (verb === 'begin') {
        const [run, token, pid, at] = args;
        const request = this.victimRequest;
        const holdMs = request ? request.holdMs : this.chooseHoldMs();
        section = {
          run,
          token,
          pid: Number(pid),
          begin: usToMs(at),
          witnesses: [usToMs(at)],
          writes: [],
          end: undefined,
          closedAt: undefined,
          holdMs,
          victim: Boolean(request),
        };
        this.sections.set(run, section);
        if (request?.writeAfterNewer) {
          this.awaitNewer(section, socket, holdMs);
          socket.write(`hold ${Math.round(request.capMs)}\n`);
        } else {
          socket.write(`hold ${Math.round(holdMs)}\n`);
        }
        request?.begun(section);
      } else if (!section) {
        this.protocolErrors.push(`"${line}" before begin`);
      } else if (verb === 'tick') {
        section.witnesses.push(usToMs(args[0]));
      } else if (verb === 'write') {
        const at = usToMs(args[1]);
        section.witnesses.push(at);
        const write = this.decide(section.run, args[0], at);
        section.writes.push(write);
        socket.write(write.accepted ? 'ok\n' : `stale ${this.highest.token}\n`);
      } else if (verb === 'end') {
        section.end = usToMs(args[0]);
        section.witnesses.push(section.end);
      } else {
        this.protocolErrors.push(`unknown message "${line}"`);
      }
    });
    socket.on('close', () => {
      this.sockets.delete(socket);
      if (section) section.closedAt = wallMs();
    });
  }

  /** Tell `section`'s child to write once `minMs` has passed and a higher token has been written. */
  awaitNewer(section, socket, minMs) {
    const waiting = { section, held: false, newer: false };
    const tell = () => {
      if (!waiting.held || !waiting.newer || !this.awaiting.delete(waiting)) return;
      if (section.writes.length > 0 || socket.destroyed) return;
      section.toldAt = wallMs();
      socket.write('write\n');
    };
    waiting.sawNewer = () => {
      waiting.newer = true;
      tell();
    };
    this.awaiting.add(waiting);
    setTimeout(() => {
      waiting.held = true;
      tell();
    }, minMs).unref();
    socket.once('close', () => this.awaiting.delete(waiting));
  }

  /** Accept a token at least as high as every accepted one; reject a lower one. */
  decide(run, token, at) {
    const value = BigInt(token);
    const accepted = this.highest === undefined || value >= this.highest.value;
    const write = {
      run,
      token,
      at,
      receivedAt: wallMs(),
      accepted,
      highestBefore: this.highest?.token,
      highestRunBefore: this.highest?.run,
    };
    if (accepted) this.highest = { value, token, run };
    this.writes.push(write);
    if (accepted)
      for (const waiting of [...this.awaiting]) if (BigInt(waiting.section.token) < value) waiting.sawNewer();
    return write;
  }

  async close() {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
