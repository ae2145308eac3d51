// Durations: 250ms, 30s, 5m, 1h, 1d; a bare number means seconds. A leading dot is fine, as in
// flock's own `-w .007`. Go's forms too (time.ParseDuration, as etcdctl and consul take them):
// a sequence such as 1h30m, 1m30.5s, 1h0m0s, with us/µs/ns besides. No spaces anywhere.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};
const NUMBER = String.raw`(?:\d+(?:\.\d+)?|\.\d+)`;
const UNIT = 'ns|us|µs|ms|s|m|h|d';
const BARE = new RegExp(`^${NUMBER}$`);
const SEQUENCE = new RegExp(`^(?:${NUMBER}(?:${UNIT}))+$`);
const PART = new RegExp(`(${NUMBER})(${UNIT})`, 'g');

/** Milliseconds for a duration string, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  let ms: number;
  if (BARE.test(text)) ms = Number(text) * UNIT_MS.s;
  else if (SEQUENCE.test(text)) {
    ms = 0;
    for (const [, number, unit] of text.matchAll(PART)) ms += Number(number) * UNIT_MS[unit];
  } else return undefined;
  return Number.isFinite(ms) && ms <= Number.MAX_SAFE_INTEGER ? Math.round(ms) : undefined;
}

/** Short human form for messages: 1500 -> "1.5s", 90000 -> "1m30s", a day or more in days ("30d", "1d2h"). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)}s`;
  const totalSeconds = Math.round(ms / 1000);
  const d = Math.floor(totalSeconds / 86_400);
  const h = Math.floor((totalSeconds % 86_400) / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds % 60;
  return (d ? `${d}d` : '') + (h ? `${h}h` : '') + (m ? `${m}m` : '') + (s || (!d && !h && !m) ? `${s}s` : '');
}
