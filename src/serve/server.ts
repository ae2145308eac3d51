// The board's HTTP server: GET and HEAD only, a fixed set of paths, the same security headers on
// every answer. The store is read at most once per refresh interval for all viewers together
// (Refreshing); a lock's own page and /api/locks/<name> keep one such reading per name, for at most
// KEYS_KEPT names.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { validateKey } from '../config/index.js';
import { DlockError } from '../errors.js';
import type { Logger } from '../log.js';
import { toJson } from '../untrusted.js';
import { boardAnswer, errorAnswer, type JsonAnswer } from './answers.js';
import { boardScript } from './board-script.js';
import { BOARD_CSS, boardPage } from './page.js';
import type { Board, BoardLock } from './read.js';
import { Refreshing } from './refresh.js';

/** The page forbids everything but its own script, style and fetches: no inline script, no frames, no forms. */
export const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
};

/** Names whose reading is kept (a lock's own page, /api/locks/<name>); past it the oldest is dropped. */
const KEYS_KEPT = 256;
/** The longest request path served: a lock name is at most a few hundred characters. */
const PATH_MAX = 4096;

export interface BoardSource {
  prefix: string;
  /**
   * The Host headers answered (lowercase host:port); undefined: any. On loopback, a page of another site that a
   * DNS name pointed at 127.0.0.1 sends its own name: it is refused, so no web page can read the board (rebinding).
   */
  hosts?: Set<string>;
  refreshMs: number;
  readBoard: () => Promise<Board>;
  readLock: (key: string) => Promise<{ lock: BoardLock; storeMs: number }>;
  /** The metrics text (dlock metrics' own code), loaded at the first /metrics. */
  metrics: () => Promise<{ text: string; contentType: string }>;
}

export function boardServer(source: BoardSource, log: Logger): Server {
  // Read at most every half refresh: a page then shows what the store said at most 1.5 refreshes ago.
  const readEveryMs = source.refreshMs / 2;
  const board = new Refreshing(source.readBoard, readEveryMs, outageLog(log, source.prefix));
  const perKey = new Map<string, Refreshing<{ lock: BoardLock; storeMs: number }>>();
  const keyReading = (key: string) => {
    let reading = perKey.get(key);
    if (!reading) {
      if (perKey.size >= KEYS_KEPT) perKey.delete(perKey.keys().next().value!);
      reading = new Refreshing(() => source.readLock(key), readEveryMs);
      perKey.set(key, reading);
    }
    return reading.get();
  };
  // Prometheus' scrapes are read afresh but for a second: viewers who reload /metrics share one read.
  const metrics = new Refreshing(source.metrics, Math.min(source.refreshMs, 1000));
  const extra = { prefix: source.prefix, refresh_ms: source.refreshMs };

  const routes = async (path: string, response: ServerResponse): Promise<void> => {
    if (path === '/' || path.startsWith('/lock/')) return send(response, 200, boardPage(source.refreshMs), HTML);
    if (path === '/board.js') return send(response, 200, boardScript(), 'text/javascript; charset=utf-8');
    if (path === '/board.css') return send(response, 200, BOARD_CSS, 'text/css; charset=utf-8');
    // The browser asks for one on its own: none, without a 404 in the page's console.
    if (path === '/favicon.ico') return send(response, 204, '', 'image/x-icon');
    if (path === '/api/board') return json(response, boardAnswer(await board.get(), boardFields, extra));
    if (path === '/api/locks') {
      const reading = await board.get();
      if (reading.failing)
        return json(
          response,
          boardAnswer({ failing: reading.failing }, () => ({}), {}),
        );
      return json(response, { status: 200, body: `${toJson(reading.value!.listing)}\n` });
    }
    const named = /^\/api\/(board|locks)\/(.+)$/.exec(path);
    if (named) {
      const key = keyFromPath(named[2]);
      if (typeof key !== 'string') return json(response, key);
      const reading = await keyReading(key);
      if (named[1] === 'board')
        return json(
          response,
          boardAnswer(reading, (v) => ({ lock: v.lock }), extra),
        );
      if (reading.failing)
        return json(
          response,
          boardAnswer({ failing: reading.failing }, () => ({}), {}),
        );
      const { history: _history, history_error: _error, ...status } = reading.value!.lock;
      return json(response, { status: 200, body: `${toJson(status)}\n` });
    }
    if (path === '/metrics') {
      // A store that cannot be read is already an answer; a scrape that threw (a bug) never serves an old text.
      const { value, failing } = await metrics.get();
      if (failing || !value) throw failing?.error;
      // As dlock metrics --listen: a failed collection is still an answer (dlock_metrics_collect_success 0).
      return send(response, 200, value.text, value.contentType);
    }
    send(response, 404, 'not found: the board is at /\n', TEXT);
  };

  return createServer((request, response) => {
    const host = request.headers.host?.toLowerCase();
    if (source.hosts && !(host && source.hosts.has(host)))
      return send(response, 421, `dlock serve answers to ${[...source.hosts].join(', ')} only\n`, TEXT);
    void answer(request, response, routes, log);
  });
}

const HTML = 'text/html; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  routes: (path: string, response: ServerResponse) => Promise<void>,
  log: Logger,
): Promise<void> {
  try {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('Allow', 'GET, HEAD');
      return send(response, 405, 'the board is read-only: GET and HEAD only\n', TEXT);
    }
    const url = request.url ?? '/';
    if (url.length > PATH_MAX) return send(response, 414, 'the address is too long\n', TEXT);
    await routes(url.split('?')[0], response);
  } catch (error) {
    // A bug: one line in the log, a short answer, the server stays up.
    log.warn(`board: ${error instanceof Error ? error.message : String(error)}`);
    if (!response.headersSent) send(response, 500, 'internal error (a bug: please report it)\n', TEXT);
  }
}

/** The lock name in a path, checked as every key is; else the 400 answer. */
function keyFromPath(encoded: string): string | JsonAnswer {
  try {
    return validateKey(decodeURIComponent(encoded));
  } catch (error) {
    return errorAnswer(400, error instanceof DlockError ? error.message : 'not a URL-encoded lock name');
  }
}

/** The board's own fields: each lock in detail, the unreadable ones as status --json lists them, how many left out. */
function boardFields(board: Board) {
  const unreadable = [...board.listing.filter((entry) => 'error' in entry), ...board.failed];
  return { locks: board.locks, unreadable, omitted: board.omitted };
}

/** One line when the store stops answering, one when it answers again. */
function outageLog(log: Logger, prefix: string) {
  return {
    failing: (error: unknown) =>
      log.warn(`store unreachable: ${error instanceof DlockError ? error.message : String(error)}`, {
        event: 'outage',
      }),
    recovered: () => log.warn(`store reachable again; the board shows ${prefix} afresh`, { event: 'restored' }),
  };
}

function json(response: ServerResponse, { status, body }: JsonAnswer): void {
  send(response, status, body, 'application/json; charset=utf-8');
}

function send(response: ServerResponse, status: number, body: string, contentType: string): void {
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
  });
  response.end(body);
}
