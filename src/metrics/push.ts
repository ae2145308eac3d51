// --push: the metrics to a Pushgateway with PUT (the group's metrics replaced as a whole), as
// job "dlock", grouped by prefix and host so that each host's run replaces only its own group.

import { hostname } from 'node:os';
import { UnavailableError } from '../errors.js';
import { redactUrl } from '../secrets.js';
import { printable } from '../untrusted.js';

/** How long a push may take before dlock gives up (exit 69). */
export const PUSH_TIMEOUT_MS = 10_000;

/**
 * PUT `text` to `<url>/metrics/job/dlock/prefix@base64/…/host@base64/…`. Label values go in
 * base64url (the Pushgateway's encoding for values with "/" or empty ones); credentials in the
 * URL become a Basic Authorization header (fetch refuses them in a URL) and are masked in errors.
 */
export async function pushMetrics(url: string, text: string, contentType: string, prefix: string): Promise<void> {
  const target = new URL(url);
  const headers: Record<string, string> = { 'Content-Type': contentType };
  if (target.username || target.password) {
    const user = decodeURIComponent(target.username);
    const password = decodeURIComponent(target.password);
    headers.Authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    target.username = '';
    target.password = '';
  }
  const group = `job/dlock/prefix@base64/${base64Label(prefix)}/host@base64/${base64Label(hostname())}`;
  target.pathname = `${target.pathname.replace(/\/+$/, '')}/metrics/${group}`;
  const shown = printable(redactUrl(url));
  let response: Response;
  try {
    response = await fetch(target, {
      method: 'PUT',
      headers,
      body: text,
      signal: AbortSignal.timeout(PUSH_TIMEOUT_MS),
    });
  } catch (error) {
    throw new UnavailableError(`--push ${shown}: cannot reach the Pushgateway (${fetchFailure(error)})`);
  }
  if (!response.ok) {
    const body = (await response.text().catch(() => '')).slice(0, 200).trim();
    // Go's servers repeat the status in the body ("404 page not found"): say it once.
    const reason = body.startsWith(`${response.status} `) ? body.slice(4).trim() : body;
    throw new UnavailableError(
      `--push ${shown}: the Pushgateway answered ${response.status}${reason ? ` (${printable(reason)})` : ''}`,
    );
  }
}

/** A label value as the Pushgateway's base64url path segment ("=" for the empty value). */
function base64Label(value: string): string {
  return value === '' ? '=' : Buffer.from(value).toString('base64url');
}

/** Why fetch failed, in a few words: Node names the system error in its cause, Bun on the error itself. */
function fetchFailure(error: unknown): string {
  const err = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timed out';
  if ((err.cause?.code ?? err.code) === 'ECONNREFUSED') return 'connection refused';
  return (err.cause?.message ?? err.message ?? String(error)).split('\n')[0];
}
