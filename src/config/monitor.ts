// --ping, --ping-busy, --ping-timeout and --on-event (run and acquire): who is told about the lock.

import { badOption, UsageError } from '../errors.js';
import { positiveDuration, type Env, type RawOptions } from './options.js';

/** What a monitor is told, and how long it may hold dlock up at exit. */
export interface MonitorConfig {
  /** --ping: a healthchecks-style URL (<url>/start, <url>, <url>/<exit status>, <url>/log). */
  pingUrl: string | undefined;
  /** --ping-busy: a run turned away (busy, done this window, superseded) sends <url>/log. */
  pingBusy: boolean;
  /** --ping-output (run): the final ping's body is the last this many bytes of the command's output. */
  pingOutputBytes?: number;
  /** --on-event: a /bin/sh command run for each lock event. */
  onEvent: string | undefined;
  /** --ping-timeout: the bound of each ping (retries included) and, at exit, of the hooks still running. */
  timeoutMs: number;
}

export const PING_TIMEOUT_DEFAULT = '5s';
/** The longest --ping-timeout: a monitor must never hold a job (or its lock) up for long. */
export const PING_TIMEOUT_MAX_MS = 30_000;

/** --ping, --on-event and their options (or their DLOCK_ variables); undefined when neither is asked for. */
export function monitorConfig(raw: RawOptions, env: Env): MonitorConfig | undefined {
  const urlOption = raw.ping !== undefined ? '--ping' : 'DLOCK_PING_URL';
  const url = raw.ping ?? nonEmpty(env.DLOCK_PING_URL);
  const onEvent = raw.onEvent ?? nonEmpty(env.DLOCK_ON_EVENT);
  const timeoutOption = raw.pingTimeout !== undefined ? '--ping-timeout' : 'DLOCK_PING_TIMEOUT';
  const timeoutText = raw.pingTimeout ?? nonEmpty(env.DLOCK_PING_TIMEOUT) ?? PING_TIMEOUT_DEFAULT;
  const timeoutMs = positiveDuration(timeoutOption, timeoutText);
  if (timeoutMs > PING_TIMEOUT_MAX_MS) throw badOption(timeoutOption, timeoutText, 'must be at most 30s');
  if (raw.pingBusy && url === undefined) throw new UsageError('--ping-busy needs --ping (or DLOCK_PING_URL)');
  // The value before the rule between options: `--ping-output k` is a bad size first.
  const pingOutputBytes = raw.pingOutput === undefined ? undefined : outputSize(raw.pingOutput);
  if (raw.pingOutput !== undefined && url === undefined)
    throw new UsageError('--ping-output needs --ping (or DLOCK_PING_URL)');
  if (url !== undefined && !isHttpUrl(url)) throw badOption(urlOption, url, 'expected an http:// or https:// URL');
  if (raw.onEvent === '') throw badOption('--on-event', '', 'expected a command');
  if (url === undefined && onEvent === undefined) return undefined;
  return { pingUrl: url, pingBusy: Boolean(raw.pingBusy), pingOutputBytes, onEvent, timeoutMs };
}

/** The most --ping-output keeps: what healthchecks.io keeps of a ping's body (100 kB). */
export const PING_OUTPUT_MAX = 100_000;

/** --ping-output's size: bytes, or k for 1000 bytes (`4096`, `10k`: no spaces); 1 byte up to PING_OUTPUT_MAX. */
function outputSize(text: string): number {
  const match = /^(\d+)(k)?$/.exec(text);
  if (!match) throw badOption('--ping-output', text, 'not a size (bytes, or k for 1000 bytes: 10k)');
  const bytes = Number(match[1]) * (match[2] === 'k' ? 1000 : 1);
  if (bytes < 1 || bytes > PING_OUTPUT_MAX)
    throw badOption('--ping-output', text, 'must be from 1 byte to 100k (100000 bytes, what healthchecks.io keeps)');
  return bytes;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}

function isHttpUrl(text: string): boolean {
  try {
    const { protocol, host } = new URL(text);
    return (protocol === 'http:' || protocol === 'https:') && host !== '';
  } catch {
    return false;
  }
}
