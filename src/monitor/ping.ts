// One healthchecks-style ping: a POST of a short JSON summary, retried on a network error, a 429
// or a 5xx, all within one deadline. A failed ping is one warning line, never an error of the job.

import { now, sleep } from '../clock.js';
import type { Logger } from '../log.js';
import { maskSecrets } from '../secrets.js';

/** Attempts per ping: the first and two retries, as the deadline allows. */
const ATTEMPTS = 3;
const RETRY_PAUSE_MS = 250;

/** `base` with `suffix` ("start", "log", "3") appended to its path, before any query: <url>/<suffix>. */
export function pingUrl(base: string, suffix: string): string {
  if (suffix === '') return base;
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${suffix}`;
  return url.href;
}

/** POST `body` to `url`, giving up at `deadline` (a now() time); a failure is a warning on `log`. */
export async function ping(url: string, body: object, deadline: number, log: Logger): Promise<void> {
  let failure = 'timed out';
  const { target, authorization } = withoutCredentials(url);
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const leftMs = Math.floor(deadline - now());
    if (leftMs <= 0) break;
    try {
      const response = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...authorization },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(leftMs),
      });
      await response.body?.cancel().catch(() => {});
      if (response.ok) return;
      failure = `HTTP ${response.status}`;
      if (response.status !== 429 && response.status < 500) break;
    } catch (error) {
      failure = reason(error);
    }
    if (attempt < ATTEMPTS) await sleep(Math.min(RETRY_PAUSE_MS * attempt, deadline - now()));
  }
  log.warn(maskSecrets(`ping ${url} failed: ${failure}`), { event: 'ping-failed', url: maskSecrets(url) });
}

/** fetch refuses a URL with user:password@: they go in an Authorization header (HTTP Basic) instead. */
function withoutCredentials(text: string): { target: string; authorization: Record<string, string> } {
  const url = new URL(text);
  if (url.username === '' && url.password === '') return { target: text, authorization: {} };
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return { target: url.href, authorization: { authorization: `Basic ${Buffer.from(pair).toString('base64')}` } };
}

/** Why fetch threw, in a few words: "connection refused", "timed out", or its cause's message. */
function reason(error: unknown): string {
  const err = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timed out';
  // Node's fetch names the system error in its cause, Bun's on the error itself.
  if ((err.cause?.code ?? err.code) === 'ECONNREFUSED') return 'connection refused';
  return (err.cause?.message ?? err.message ?? String(error)).split('\n')[0];
}
