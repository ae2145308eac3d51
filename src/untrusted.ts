// Text dlock did not write itself: a lock hash (anyone who can write to Redis can forge one),
// a key name SCAN found, a server's error reply, a file's #! line. Before it is printed it is
// cut to a sane length (`cut`, once, where it is read) and its control characters are made
// inert (`printable` for text, `toJson` for JSON). Nothing here depends on how big or how
// strange the text is: formatting never slows down or throws on it.

/**
 * What must not reach a terminal raw: C0 controls, DEL, C1 controls (\x9b is CSI on many
 * terminals), format characters (bidi overrides such as U+202E, zero-width characters),
 * line and paragraph separators, and lone surrogates.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** Longest field shown, in code points: never less than anything dlock writes (a key, the stored command: 256). */
export const SHOWN_MAX = 256;

/** `text` with every unsafe character written as an escape: \xNN up to U+00FF, \uNNNN, \u{NNNNN}. */
export function printable(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.codePointAt(0)!;
    if (code <= 0xff) return `\\x${hex(code, 2)}`;
    return code <= 0xffff ? `\\u${hex(code, 4)}` : `\\u{${code.toString(16)}}`;
  });
}

/** `text` on one line: each run of whitespace that holds a line break becomes one space (one pass, no backtracking). */
export function joinLines(text: string): string {
  return text.replace(/\s+/g, (blank) => (blank.includes('\n') ? ' ' : blank));
}

/**
 * `value` as JSON with no raw unsafe character in it: JSON.stringify escapes C0 and lone
 * surrogates, not DEL, C1, U+2028 or U+202E, so those become \uNNNN escapes too. The JSON
 * parses to exactly `value`.
 */
export function toJson(value: unknown): string {
  // Outside strings JSON text is ASCII structure and space: every match is inside a string.
  return JSON.stringify(value).replace(UNSAFE, (c) =>
    Array.from({ length: c.length }, (_, i) => `\\u${hex(c.charCodeAt(i), 4)}`).join(''),
  );
}

/**
 * `text` cut to `max` code points, saying how many more there were: "abc…(5 more)". Costs O(max) plus a count of the
 * rest.
 */
export function cut(text: string, max: number = SHOWN_MAX): string {
  if (text.length <= max) return text;
  let end = 0;
  for (let points = 0; points < max && end < text.length; points++) end += isPair(text, end) ? 2 : 1;
  if (end >= text.length) return text;
  let more = 0;
  for (let i = end; i < text.length; i += isPair(text, i) ? 2 : 1) more++;
  return `${text.slice(0, end)}…(${more} more)`;
}

/**
 * A decimal integer field (since_ms, ttl_ms, pid...) within [min, max], else undefined: "abc", "1e300", "-5", "" are
 * not numbers.
 */
export function parseCount(text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined || !/^[0-9]{1,16}$/.test(text)) return undefined;
  const value = Number(text);
  return value >= min && value <= max ? value : undefined;
}

/**
 * A run's exit as JSON shows it (docs/reference/json-schema.json): the status as stored ("0" …
 * "255", "lost", "unknown", "") becomes `exit`, a number, or null when no status is known, and
 * `lost: true` when the lock was lost while the command ran.
 */
export function exitFields(stored: string): { exit: number | null; lost?: true } {
  if (stored === 'lost') return { exit: null, lost: true };
  return { exit: parseCount(stored, 0, 255) ?? null };
}

function isPair(text: string, i: number): boolean {
  const high = text.charCodeAt(i);
  const low = text.charCodeAt(i + 1);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, '0');
}
