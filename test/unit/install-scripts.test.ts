// `npm ci` on npm 11.16+ lists every dependency whose install scripts package.json's allowScripts
// does not cover ("2 packages have install scripts not yet covered by allowScripts: bun,
// esbuild"), and npm 12 skips them: a newcomer's first command must be clean. By name: the
// lockfile has no `resolved` URLs, from which npm would read a pinned entry's (pkg@1.2.3) version,
// so a pinned entry still warns; package.json pins the versions themselves.

import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';

const read = (file: string) => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));

test("allowScripts names exactly the lockfile's packages with install scripts", () => {
  const lock = read('package-lock.json') as {
    packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
  };
  const withScripts = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript)
    .map(([path]) => path.replace(/^.*node_modules\//, ''))
    .sort();
  const { allowScripts } = read('package.json') as { allowScripts?: Record<string, boolean> };
  expect(Object.keys(allowScripts ?? {}).sort()).toEqual(withScripts);
  expect(Object.values(allowScripts ?? {}).every((allowed) => allowed === true)).toBe(true);
});
