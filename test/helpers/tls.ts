// A throwaway PKI made with openssl and redis-server processes that speak only TLS.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { canConnect, freePort } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';

/** PEM files in a temporary directory: a trusted CA, certificates it signed, and a stranger CA. */
export interface Pki {
  dir: string;
  ca: string;
  /** Server certificate for IP 127.0.0.1. */
  serverCert: string;
  serverKey: string;
  /** Server certificate for a name that is not the one dlock connects to. */
  wrongHostCert: string;
  wrongHostKey: string;
  clientCert: string;
  clientKey: string;
  /** A CA that signed nothing here. */
  otherCa: string;
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA (EC P-256, valid a day) at `name`.crt/.key. */
function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
  ]);
}

/** A leaf certificate signed by `ca`, with the given extensions (subjectAltName, extendedKeyUsage). */
function makeLeaf(dir: string, ca: string, name: string, extensions: string): void {
  openssl(dir, [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${name}`,
  ]);
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '1',
    '-extfile',
    `${name}.ext`,
  ]);
}

export function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'dlock-pki-'));
  makeCa(dir, 'ca');
  makeCa(dir, 'other-ca');
  makeLeaf(dir, 'ca', 'server', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  makeLeaf(dir, 'ca', 'wrong-host', 'subjectAltName=DNS:elsewhere.invalid\nextendedKeyUsage=serverAuth\n');
  makeLeaf(dir, 'ca', 'client', 'extendedKeyUsage=clientAuth\n');
  const at = (file: string) => join(dir, file);
  return {
    dir,
    ca: at('ca.crt'),
    serverCert: at('server.crt'),
    serverKey: at('server.key'),
    wrongHostCert: at('wrong-host.crt'),
    wrongHostKey: at('wrong-host.key'),
    clientCert: at('client.crt'),
    clientKey: at('client.key'),
    otherCa: at('other-ca.crt'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TlsRedisOptions {
  cert: string;
  key: string;
  /** Require a client certificate signed by the CA (--tls-auth-clients yes). */
  clientAuth?: boolean;
}

/** redis-server listening on a loopback TLS port only (plain port disabled). */
export class TlsRedis {
  private clients: Redis[] = [];

  private constructor(
    readonly port: number,
    private readonly process: ChildProcess,
    private readonly pki: Pki,
    private readonly dir: string,
  ) {}

  static async start(pki: Pki, options: TlsRedisOptions): Promise<TlsRedis> {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'dlock-tls-redis-'));
    const args = [
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ];
    args.push('--tls-cert-file', options.cert, '--tls-key-file', options.key, '--tls-ca-cert-file', pki.ca);
    args.push('--tls-auth-clients', options.clientAuth ? 'yes' : 'no');
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    const server = new TlsRedis(port, child, pki, dir);
    await waitUntil(`redis-server with TLS on ${port} to start`, () => {
      if (child.exitCode !== null) throw new Error(`redis-server with TLS exited with ${child.exitCode}`);
      return canConnect(port);
    });
    return server;
  }

  get url(): string {
    return `rediss://127.0.0.1:${this.port}`;
  }

  /** An admin client over TLS (with the client certificate, so it works with clientAuth too). */
  client(): Redis {
    const client = new Redis({
      host: '127.0.0.1',
      port: this.port,
      maxRetriesPerRequest: 1,
      tls: {
        ca: readFileSync(this.pki.ca),
        cert: readFileSync(this.pki.clientCert),
        key: readFileSync(this.pki.clientKey),
      },
    });
    client.on('error', () => {});
    this.clients.push(client);
    return client;
  }

  async close(): Promise<void> {
    for (const client of this.clients) client.disconnect();
    const exited = new Promise((resolve) => this.process.once('exit', resolve));
    if (this.process.exitCode === null && this.process.signalCode === null) {
      this.process.kill('SIGKILL');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
