// One healthchecks-style ping: a POST of a short JSON summary, retried on a network error, a 408,
// a 429 or a 5xx, all within one deadline. What failed is returned for the monitor (./monitor.ts) to
// report as one warning line, never an error of the job.
// The npm build sends with node:http(s), not fetch, whose first use costs Node tens of
// milliseconds of CPU in every `dlock run --ping` (docs/performance.md).

import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { now, sleep } from '../clock.js';
import { VERSION } from '../version.js';

/** Attempts per ping: the first and two retries, as the deadline allows. */
const ATTEMPTS = 3;
const RETRY_PAUSE_MS = 250;

/**
 * `base` with `suffix` ("start", "log", "3") appended to its path, before any query:
 * <url>/<suffix>; with `rid`, the run id healthchecks pairs a start with its end by (`?rid=`).
 */
export function pingUrl(base: string, suffix: string, rid?: string): string {
  // Always serialized by URL, the bare <url> too: one form for every ping (a blank is %20).
  const url = new URL(base);
  if (suffix !== '') url.pathname = `${url.pathname.replace(/\/+$/, '')}/${suffix}`;
  if (rid !== undefined) url.searchParams.set('rid', rid);
  return url.href;
}

/** A random run id: a version 4 UUID, as healthchecks takes it in `?rid=`. */
export function runId(randomHex: string): string {
  const hex = randomHex.padEnd(32, '0').slice(0, 32).split('');
  hex[12] = '4';
  hex[16] = '89ab'[parseInt(hex[16], 16) & 3];
  const text = hex.join('');
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}

/**
 * POST `body` to `url` (an object as JSON, bytes as text: --ping-output's tail), giving up at
 * `deadline` (a now() time): undefined when it was answered, else why not.
 */
export async function ping(url: string, body: object, deadline: number): Promise<string | undefined> {
  let failure = 'timed out';
  const payload = Buffer.isBuffer(body) ? body : JSON.stringify(body);
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const leftMs = Math.floor(deadline - now());
    if (leftMs <= 0) break;
    try {
      const status = await post(url, payload, leftMs);
      if (status >= 200 && status < 300) return undefined;
      failure = `HTTP ${status}`;
      // 408: the monitor (or a proxy before it) timed the request out; it may take the next one.
      if (status !== 408 && status !== 429 && status < 500) break;
    } catch (error) {
      failure = reason(error);
    }
    if (attempt < ATTEMPTS) await sleep(Math.min(RETRY_PAUSE_MS * attempt, deadline - now()));
  }
  return failure;
}

/**
 * One POST of `payload` to `text`: the status of the answer, given within `timeoutMs` (its body
 * is drained, not waited for). Credentials in the URL (user:password@) go in an Authorization
 * header (HTTP Basic), as curl sends them. The binary (Bun) sends with fetch: it starts at once
 * there and honours HTTP_PROXY, HTTPS_PROXY and NO_PROXY. Node's fetch costs tens of milliseconds
 * to load and honours no proxy on Node 20, so the npm build sends with node:http(s).
 */
function post(text: string, payload: string | Buffer, timeoutMs: number): Promise<number> {
  const url = new URL(text);
  const type = typeof payload === 'string' ? 'application/json' : 'text/plain; charset=utf-8';
  const headers: Record<string, string> = { 'content-type': type, 'user-agent': `dlock/${VERSION}` };
  if (url.username !== '' || url.password !== '') {
    const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  const signal = AbortSignal.timeout(timeoutMs);
  if (process.versions.bun !== undefined) return fetchStatus(url, headers, payload, signal);
  return requestStatus(url, headers, payload, signal);
}

async function fetchStatus(url: URL, headers: Record<string, string>, body: string | Buffer, signal: AbortSignal) {
  const response = await fetch(url, { method: 'POST', headers, body, signal });
  void response.body?.cancel().catch(() => {});
  return response.status;
}

/** Redirects followed, as fetch follows them (it allows 20; a monitor needs one or two). */
const MAX_REDIRECTS = 5;

/**
 * The POST with node:http(s), following redirects as fetch does: a 307 or 308 repeats the POST, a
 * 301, 302 or 303 becomes a GET without the body; the Authorization header is dropped when the
 * redirect leaves the URL's origin. Only http and https targets are followed.
 */
async function requestStatus(url: URL, headers: Record<string, string>, body: string | Buffer, signal: AbortSignal) {
  let target = url;
  let post = true;
  let sent = headers;
  for (let hop = 0; ; hop++) {
    const { status, location } = await requestOnce(target, sent, post ? body : undefined, signal);
    if (![301, 302, 303, 307, 308].includes(status) || location === undefined || hop === MAX_REDIRECTS) return status;
    const next = new URL(location, target);
    if (next.protocol !== 'http:' && next.protocol !== 'https:') return status;
    if (status !== 307 && status !== 308) [post, sent] = [false, without(sent, 'content-type')];
    if (next.origin !== target.origin) sent = without(sent, 'authorization');
    target = next;
  }
}

function without(headers: Record<string, string>, name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));
}

function requestOnce(
  url: URL,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
  signal: AbortSignal,
): Promise<{ status: number; location: string | undefined }> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const sized = body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) };
  const options: RequestOptions = { method: body === undefined ? 'GET' : 'POST', headers: sized, agent: false, signal };
  return new Promise((resolve, reject) => {
    const outgoing = request(url, options, (response: IncomingMessage) => {
      response.on('error', () => {});
      response.resume();
      resolve({ status: response.statusCode ?? 0, location: response.headers.location });
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Why a request failed, in a few words: "connection refused", "timed out", or its cause's message. */
function reason(error: unknown): string {
  const err = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timed out';
  // node:http names the system error on the error, Bun's fetch too; Node's fetch in its cause.
  if ((err.cause?.code ?? err.code) === 'ECONNREFUSED') return 'connection refused';
  return (err.cause?.message ?? err.message ?? String(error)).split('\n')[0];
}
