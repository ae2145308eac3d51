// dlock's version, as package.json names it: written into the bundle by scripts/build.mjs
// (esbuild's define); "0.0.0-dev" when the sources run unbundled (the unit tests).

declare const __DLOCK_VERSION__: string | undefined;
export const VERSION = typeof __DLOCK_VERSION__ === 'string' ? __DLOCK_VERSION__ : '0.0.0-dev';
