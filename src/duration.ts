// Durations: 250ms, 30s, 5m, 1h, 1d; a bare number means seconds.
// A leading dot is fine, as in flock's own `-w .007`.

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h|d)?$/;

/** Milliseconds for a duration string, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] ?? 's'];
  return Number.isFinite(ms) && ms <= Number.MAX_SAFE_INTEGER ? Math.round(ms) : undefined;
}

/** Short human form for messages: 1500 -> "1.5s", 90000 -> "1m30s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)}s`;
  const totalSeconds = Math.round(ms / 1000);
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds % 60;
  return (h ? `${h}h` : '') + (m ? `${m}m` : '') + (s || (!h && !m) ? `${s}s` : '');
}
