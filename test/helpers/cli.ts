// Run bin/dlock as a user would: a real process, real argv and env, exit code and stderr.

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const DLOCK = process.env.DLOCK_BIN ?? fileURLToPath(new URL('../../bin/dlock', import.meta.url));
/** Whether the tests start the standalone executable (Bun) rather than the npm build (Node). */
export const BINARY = process.env.DLOCK_BIN !== undefined;
export const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

export interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  process: ChildProcess;
  /** stderr so far (lock events, errors). */
  stderr(): string;
  stdout(): string;
  result: Promise<Result>;
  /** Resolves when stderr (or stdout) contains `text`; rejects if the process exits first. */
  waitFor(text: string | RegExp, stream?: 'stderr' | 'stdout'): Promise<void>;
}

/** Environment without the caller's DLOCK_* settings, so tests state what they use. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Nor a proxy of the machine's: the binary's pings would go through it (docs/guides/monitoring.md).
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('DLOCK_') && name !== 'CI' && !/_proxy$/i.test(name)) env[name] = value;
  return { ...env, ...extra };
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** A command dlock is started through, e.g. `['faketime', '-f', '+2s']`. */
  via?: string[];
}

export function start(args: string[], options: StartOptions = {}): Running {
  const [file, ...rest] = [...(options.via ?? []), DLOCK, ...args];
  const child = spawn(file, rest, {
    env: options.env ?? cleanEnv(),
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (d) => ((stdout += d), listeners.forEach((l) => l())));
  child.stderr!.on('data', (d) => ((stderr += d), listeners.forEach((l) => l())));
  const result = new Promise<Result>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return {
    process: child,
    stderr: () => stderr,
    stdout: () => stdout,
    result,
    waitFor(text, stream = 'stderr') {
      return new Promise((resolve, reject) => {
        const check = () => {
          const seen = stream === 'stderr' ? stderr : stdout;
          if (typeof text === 'string' ? seen.includes(text) : text.test(seen)) {
            listeners.delete(check);
            resolve();
          }
        };
        listeners.add(check);
        check();
        void result.then(() => {
          check();
          if (listeners.has(check)) reject(new Error(`exited before printing ${text}; stderr: ${stderr}`));
        });
      });
    },
  };
}

export function dlock(args: string[], options: StartOptions = {}): Promise<Result> {
  return start(args, options).result;
}

/** A shell (or any program) run with `args` and `env`; resolves once every holder of its pipes is gone. */
export function runShell(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Result> {
  const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/**
 * Any program run to its end (execFile: a build script, dpkg, npm, a compiled dlock) and its status,
 * never a rejection: `code` is -1 when it could not start or died of a signal (`signal` then says).
 */
export function execResult(
  file: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; maxBuffer?: number },
): Promise<Result> {
  const { cwd, env, maxBuffer = 16 * 1024 * 1024 } = options;
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env, encoding: 'utf8', maxBuffer }, (error, stdout, stderr) => {
      const failure = error as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
      resolve({
        code: typeof failure?.code === 'number' ? failure.code : failure ? -1 : 0,
        signal: failure?.signal ?? null,
        stdout,
        stderr,
      });
    });
  });
}
