// Polling for state that no event announces (a port that starts listening, a key that
// appears, a pid that goes away). Await an event instead wherever there is one.

/**
 * Call `check` (sync or async) every `everyMs` until it returns a value other than undefined
 * or false, and resolve with that value; reject after `timeoutMs`, naming `what` and the last
 * error `check` threw (a throw counts as "not yet").
 */
export async function waitUntil(what, check, { timeoutMs = 10_000, everyMs = 10 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs}ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`,
      );
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
