// The floors of the overhead section, built at bench start into a temporary directory: small
// programs (bench/floors/) compiled with Bun exactly as dist/dlock-linux-x64 is (scripts/build-binary.mjs:
// --compile --bytecode --minify, the pinned runtime, no autoloaded config), so each binary row has a
// ratio to what its runtime can do: a hello-world (for --version), a raw socket (SET NX PX, spawn
// `true`, DEL: no library), and the same with ioredis. Node also runs that one, bundled, as a peer of
// the npm build, not its floor (it came out slower than dlock's npm run: `node -e 0` is that floor).

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostBun } from '../../scripts/bun-runtimes.mjs';

const FLOORS = fileURLToPath(new URL('../floors/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const floorScript = (name) => join(FLOORS, `${name}.cjs`);

/**
 * A floor script bundled for node into `dir` by esbuild (minified, one file, as dist/dlock.cjs is,
 * without its stubs, patches and code cache: the bench's peer row for the npm build, not a floor,
 * since dlock's code cache and patches make dlock faster). Resolves to { file } or { failed: reason }.
 */
export async function bundleForNode(dir, name) {
  const file = join(dir, `floor-${name}.node.cjs`);
  try {
    const { build } = await import('esbuild');
    await build({
      entryPoints: [floorScript(name)],
      outfile: file,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      minify: true,
      logLevel: 'silent',
    });
    return { file };
  } catch (error) {
    return { failed: `esbuild failed: ${error.message.split('\n')[0]}` };
  }
}

/**
 * Compile each named floor into `dir`: resolves to { name: executable } and { name: reason } for
 * those that could not be built (no Bun: a skipped row, never a bench failure).
 */
export function buildFloors(dir, names) {
  const built = {};
  const failed = {};
  const bun = hostBun();
  for (const name of names) {
    if (!bun) {
      failed[name] = 'Bun is not installed (npm ci brings it)';
      continue;
    }
    const out = join(dir, `floor-${name}`);
    try {
      // prettier-ignore
      execFileSync(bun, [
        'build', floorScript(name), '--compile', '--bytecode', '--minify', '--format=cjs',
        `--compile-executable-path=${bun}`,
        '--no-compile-autoload-dotenv', '--no-compile-autoload-bunfig',
        '--no-compile-autoload-tsconfig', '--no-compile-autoload-package-json', '--outfile', out,
      ], { stdio: 'pipe', cwd: ROOT, env: { ...process.env, DO_NOT_TRACK: '1' } });
      built[name] = out;
    } catch (error) {
      failed[name] = `bun build failed: ${error.stderr?.toString().trim().split('\n').pop() || error.message}`;
    }
  }
  return { built, failed };
}
