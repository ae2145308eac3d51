// `ps` shows every process's command line to every user of the host: a password given with
// --redis would stay readable there for the whole run. Rewrite the title with it masked
// (Linux: the kernel's copy of argv is overwritten). Environment variables are the safe place.

import { redactUrlsIn } from './redis/url.js';

export function hideSecretsFromPs(argv: string[]): void {
  const shown = argv.map((arg) => redactUrlsIn(arg));
  if (shown.every((arg, i) => arg === argv[i])) return;
  try {
    process.title = ['dlock', ...shown].join(' ');
  } catch {
    // A runtime that cannot set the title: nothing more to do here.
  }
}
