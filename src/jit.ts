// The standalone executable starts with JavaScriptCore's JIT tier-up thresholds raised
// (scripts/build-binary.mjs: --compile-jit-policy): dlock's start-up code runs once, and
// compiling it on the way (commander's options, ioredis' command table) cost more CPU than it
// saved (docs/performance.md, "Start-up"). Once start-up is over, the normal policy is back for
// whatever runs long. Nothing under Node.

type JitPolicy = { unsafe?: { setJITPolicy?: (scale: number) => void } };

let over = false;

/** Start-up is over: JavaScriptCore's normal JIT policy from here on. Once; never throws. */
export function startupOver(): void {
  if (over) return;
  over = true;
  try {
    (globalThis as { Bun?: JitPolicy }).Bun?.unsafe?.setJITPolicy?.(1);
  } catch {
    // An older runtime without it: its policy is the normal one anyway.
  }
}
