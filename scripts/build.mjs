// Build dist/dlock.cjs: one CommonJS bundle of src/ and its dependencies, used by bin/dlock
// and by the single executable. Modules imported with import() stay lazy inside it.

import { build } from 'esbuild';
import { readFileSync } from 'node:fs';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/dlock.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  keepNames: false,
  legalComments: 'linked',
  define: { __DLOCK_VERSION__: JSON.stringify(version) },
  alias: { 'supports-color': './scripts/stubs/supports-color.cjs' },
  loader: { '.bash': 'text', '.zsh': 'text', '.fish': 'text' },
  logLevel: 'warning',
});
