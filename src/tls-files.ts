// --tls-ca/--tls-cert/--tls-key: read and check the PEM files before anything connects,
// so a missing or wrong file is a usage error naming the option, not a failed handshake. Shared
// by every backend whose store speaks TLS (rediss://, etcds://).

import type { KeyObject, X509Certificate } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { badOption, UsageError } from './errors.js';

/** TLS material read from --tls-ca/--tls-cert/--tls-key (PEM): extra trust and a client certificate. */
export interface TlsFiles {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

export interface TlsPaths {
  ca?: { option: string; path: string };
  cert?: { option: string; path: string };
  key?: { option: string; path: string };
}

/** The files the options name, each with the option or variable (DLOCK_TLS_CA, …) that named it. */
export function tlsPathsOf(
  tls: { ca?: string; cert?: string; key?: string },
  env: Record<string, string | undefined>,
): TlsPaths {
  const paths: TlsPaths = {};
  for (const [name, variable] of [
    ['ca', 'DLOCK_TLS_CA'],
    ['cert', 'DLOCK_TLS_CERT'],
    ['key', 'DLOCK_TLS_KEY'],
  ] as const) {
    const path = tls[name] ?? (env[variable] || undefined);
    if (path !== undefined) paths[name] = { option: tls[name] !== undefined ? `--tls-${name}` : variable, path };
  }
  return paths;
}

/** Largest PEM file read: a CA bundle of a few hundred certificates fits many times over. */
const MAX_TLS_FILE_BYTES = 1024 * 1024;

/**
 * The file's bytes: a regular file of at most MAX_TLS_FILE_BYTES. /dev/zero, a FIFO or a
 * huge file is refused, never read forever (opened non-blocking: a FIFO without a writer
 * does not hang the open).
 */
function read(option: string, path: string): Buffer {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw badOption(option, path, stat.isDirectory() ? 'is a directory' : 'not a regular file');
    if (stat.size > MAX_TLS_FILE_BYTES)
      throw badOption(option, path, `larger than ${MAX_TLS_FILE_BYTES / 1024 / 1024} MiB: not a PEM file`);
    const buffer = Buffer.alloc(MAX_TLS_FILE_BYTES + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buffer.length; length += n)
      n = readSync(fd, buffer, length, buffer.length - length, null);
    if (length > MAX_TLS_FILE_BYTES)
      throw badOption(option, path, `larger than ${MAX_TLS_FILE_BYTES / 1024 / 1024} MiB: not a PEM file`);
    return buffer.subarray(0, length);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'is a directory'
            : `cannot read it (${code ?? 'error'})`;
    throw badOption(option, path, why);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** node:crypto only when TLS files are given: every start-up would load it otherwise (--version too). */
const crypto = () => process.getBuiltinModule('node:crypto');

function certificate(option: string, path: string, pem: Buffer): X509Certificate {
  try {
    return new (crypto().X509Certificate)(pem);
  } catch {
    throw badOption(option, path, 'not a PEM certificate');
  }
}

function privateKey(option: string, path: string, pem: Buffer): KeyObject {
  try {
    return crypto().createPrivateKey(pem);
  } catch (error) {
    const encrypted = /passphrase/i.test(String((error as Error).message));
    throw badOption(option, path, encrypted ? 'encrypted keys are not supported' : 'not a PEM private key');
  }
}

/** The files' contents, checked: certificates parse, the key parses and matches the certificate. */
export function readTlsFiles(paths: TlsPaths): TlsFiles {
  const { ca, cert, key } = paths;
  if (cert && !key)
    throw badOption(cert.option, cert.path, 'a client certificate needs its key too (--tls-key or DLOCK_TLS_KEY)');
  if (key && !cert)
    throw badOption(key.option, key.path, 'a client key needs its certificate too (--tls-cert or DLOCK_TLS_CERT)');
  const files: TlsFiles = {};
  if (ca) {
    files.ca = read(ca.option, ca.path);
    certificate(ca.option, ca.path, files.ca);
  }
  if (cert && key) {
    files.cert = read(cert.option, cert.path);
    files.key = read(key.option, key.path);
    const parsed = certificate(cert.option, cert.path, files.cert);
    if (!parsed.checkPrivateKey(privateKey(key.option, key.path, files.key))) {
      throw badOption(key.option, key.path, `does not match the certificate in ${cert.path}`);
    }
  }
  return files;
}
