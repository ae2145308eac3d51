// --listen: a scrape endpoint. Each GET /metrics reads Redis afresh (no cache: what Prometheus
// stores is what Redis said at that scrape); SIGTERM or SIGINT closes it and dlock exits 0.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { EXIT } from '../errors.js';
import type { Logger } from '../log.js';
import { listenOn, untilStopped } from '../serve/listen.js';

/** One scrape's answer: the exposition text and its content type, or a failure (503). */
export type Scrape = () => Promise<{ text: string; contentType: string }>;

/** Serve `scrape` at http://host:port/metrics until SIGTERM or SIGINT; resolves to the exit status (0). */
export async function serveMetrics(host: string, port: number, scrape: Scrape, log: Logger): Promise<number> {
  const server = createServer((request, response) => void answer(request, response, scrape, log));
  // As --textfile's 73: where the metrics go cannot be made (a port taken, not ours to bind).
  const url = `${await listenOn(server, host, port, EXIT.cantCreate)}/metrics`;
  log.info(`serving metrics at ${url}`, { event: 'listening', url });
  return untilStopped(server);
}

async function answer(request: IncomingMessage, response: ServerResponse, scrape: Scrape, log: Logger) {
  const path = (request.url ?? '').split('?')[0];
  if (path !== '/metrics' && path !== '/') return send(response, 404, 'not found: the metrics are at /metrics\n');
  if (request.method !== 'GET' && request.method !== 'HEAD') return send(response, 405, 'GET /metrics\n');
  if (path === '/') return send(response, 200, 'dlock metrics: GET /metrics\n');
  try {
    // A collection that failed is still an answer: dlock_metrics_collect_success 0 (and a warning line).
    const { text, contentType } = await scrape();
    send(response, 200, text, contentType);
  } catch (error) {
    // Anything else (a bug): the endpoint stays up, Prometheus records the failed scrape (up 0).
    const message = error instanceof Error ? error.message : String(error);
    log.warn(`scrape failed: ${message}`);
    send(response, 503, `${message}\n`);
  }
}

function send(response: ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8') {
  response.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}
