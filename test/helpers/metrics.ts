// dlock metrics' output seen from outside: its series as a map, `promtool check metrics` on it,
// and real Prometheus and Pushgateway servers (Debian's packages) on free loopback ports.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { freePort } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { tempDir } from '../fixtures/observe.js';

/** Every sample line as `name{labels}` -> value text (HELP/TYPE and blank lines left out). */
export function samples(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    found.set(line.slice(0, at), line.slice(at + 1));
  }
  return found;
}

/** `promtool check metrics` passes on `text`: exit 0 and nothing said. */
export function expectPromtoolPasses(text: string): void {
  const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  expect({ status: checked.status, stdout: checked.stdout, stderr: checked.stderr }).toEqual({
    status: 0,
    stdout: '',
    stderr: '',
  });
}

export interface HttpServer {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Start `command` (given its port) and resolve once GET `<url>/-/ready` answers 200. */
async function startHttpServer(
  name: string,
  args: (port: number, dir: string) => string[],
  ready = '/-/ready',
  stdio: 'ignore' | 'pipe' = 'ignore',
): Promise<HttpServer> {
  const port = await freePort();
  const dir = tempDir();
  const child = spawn(name, args(port, dir), { stdio });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(
    `${name} on 127.0.0.1:${port} to be ready`,
    async () => {
      if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
      return (await fetch(`${url}${ready}`)).ok;
    },
    { timeoutMs: 30_000, everyMs: 50 },
  );
  return {
    url,
    process: child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A Prometheus that scrapes `target` (host:port) every second, its TSDB in a temporary directory. */
export function startPrometheus(target: string): Promise<HttpServer> {
  return startHttpServer('prometheus', (port, dir) => {
    const config = join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n` +
        `scrape_configs:\n  - job_name: dlock\n    static_configs:\n      - targets: ['${target}']\n`,
    );
    return [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=error',
    ];
  });
}

/**
 * A Pushgateway that keeps what it is pushed in memory only: an empty --persistence.file, not
 * Debian's default /var/lib/prometheus/pushgateway.data, which the machine's own gateway uses.
 */
export function startPushgateway(): Promise<HttpServer> {
  return startHttpServer('prometheus-pushgateway', (port) => [
    `--web.listen-address=127.0.0.1:${port}`,
    '--persistence.file=',
    '--log.level=error',
  ]);
}

/**
 * Debian's node_exporter with its textfile collector alone, reading `dir`'s *.prom files at each
 * scrape of `<url>/metrics`; its log (where it says which series it dropped) is `log()`.
 */
export async function startNodeExporter(dir: string): Promise<HttpServer & { log(): string }> {
  const server = await startHttpServer(
    'prometheus-node-exporter',
    (port) => [
      '--collector.disable-defaults',
      '--collector.textfile',
      `--collector.textfile.directory=${dir}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    '/',
    'pipe',
  );
  let log = '';
  server.process.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  server.process.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  return { ...server, log: () => log };
}

/** A sample line's series with its labels sorted (node_exporter writes them sorted): `name{a="1",b="2"}`. */
export function sortedLabels(id: string): string {
  const open = id.indexOf('{');
  if (open < 0) return id;
  const labels = [...id.slice(open + 1, -1).matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((m) => m[0]);
  return `${id.slice(0, open)}{${labels.sort().join(',')}}`;
}
