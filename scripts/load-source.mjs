// Load a module of src/ into a build script: bundled by esbuild in memory (TypeScript, and the
// completion templates as text, as scripts/build.mjs bundles them) and evaluated as CommonJS.

import { build } from 'esbuild';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The exports of `entry` (a path from the repository's root). */
export async function loadSource(entry) {
  const { outputFiles } = await build({
    entryPoints: [entry],
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
    logLevel: 'warning',
    loader: { '.bash': 'text', '.zsh': 'text', '.fish': 'text', '.lua': 'text' },
  });
  const module = { exports: {} };
  const require = createRequire(import.meta.url);
  new Function('module', 'exports', 'require', outputFiles[0].text)(module, module.exports, require);
  return module.exports;
}
