// Write completions/dlock.{bash,zsh,fish} from dlock's commander program (src/cli/describe.ts): add an
// option in src/cli/, run this, and every shell completes it.
//
//   node scripts/build-completions.mjs           write completions/
//   node scripts/build-completions.mjs --check   exit 1 if completions/ is not what it would write

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSource } from './load-source.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const { completionScripts } = await loadSource('src/cli/describe.ts');
const stale = [];
for (const [shell, text] of Object.entries(completionScripts())) {
  const file = join(root, 'completions', `dlock.${shell}`);
  if (process.argv.includes('--check')) {
    if (!existsSync(file) || readFileSync(file, 'utf8') !== text) stale.push(`completions/dlock.${shell}`);
  } else {
    mkdirSync(join(root, 'completions'), { recursive: true });
    writeFileSync(file, text);
  }
}
if (stale.length > 0) {
  console.error(`build-completions: ${stale.join(', ')} out of date with src/cli/: run npm run build:completions`);
  process.exit(1);
}
