// A throwaway single-member etcd on free loopback ports, for the `etcdctl lock` peer.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort } from './redis.mjs';

/** Resolves to { endpoint, stop } or undefined (with the reason in `failed`) when etcd does not come up. */
export async function startEtcd() {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'dlock-bench-etcd-'));
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const etcd = spawn(
    'etcd',
    [
      '--name',
      'bench',
      '--data-dir',
      dir,
      '--listen-client-urls',
      client,
      '--advertise-client-urls',
      client,
      '--listen-peer-urls',
      peer,
      '--initial-advertise-peer-urls',
      peer,
      '--initial-cluster',
      `bench=${peer}`,
    ],
    { stdio: 'ignore' },
  );
  const stop = () => {
    if (etcd.exitCode === null && etcd.signalCode === null) etcd.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(clientPort, 'etcd');
    const endpoint = `127.0.0.1:${clientPort}`;
    const health = spawnSync('etcdctl', ['--endpoints', endpoint, 'endpoint', 'health'], {
      env: { ...process.env, ETCDCTL_API: '3' },
      timeout: 10_000,
    });
    if (health.status !== 0) throw new Error(`etcd is not healthy: ${String(health.stderr).trim()}`);
    return { endpoint, stop };
  } catch (error) {
    stop();
    return { failed: error.message };
  }
}
