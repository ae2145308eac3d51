// What may be a credential in text dlock shows (a message quoting an argument, the process
// title, the stored command line), masked in one pass: the time taken grows with the text's
// length only, whatever the text, since every argument of every run goes through here.

/**
 * The URL with everything that may be a password masked (and query values such as ?token=);
 * safe for any output, even when the text is not a valid URL. The credentials end at the last
 * "@" (as a URL parser reads them), so a password holding "@", "/" or ":" is masked whole.
 */
export function redactUrl(url: string): string {
  const at = url.lastIndexOf('@');
  if (at < 0) return maskQuery(url);
  // "scheme:" and any slashes: redis://, and the mistyped redis:/ or redis: as well.
  const scheme = /^[a-z][a-z0-9+.-]*:\/*/i.exec(url)?.[0] ?? '';
  const auth = url.slice(scheme.length, at);
  // Without a slash, "user:pw:x@host" reads as scheme "user:", so no user name is kept there.
  const user = scheme.endsWith('/') && auth.includes(':') ? auth.slice(0, auth.indexOf(':')) : undefined;
  // Keep a plain user name (redis://dlock:***@host); anything odder is masked whole.
  const shown = user !== undefined && /^[\w.%-]*$/.test(user) ? `${user}:***` : auth.startsWith(':') ? ':***' : '***';
  return maskQuery(`${scheme}${shown}${url.slice(at)}`);
}

/** A name whose value is a secret: --password=, PGPASSWORD=, --pw=, REDISCLI_AUTH= (not --author=). */
const SECRET_NAME = /pass(word|wd)?|secret|token|credential|(^|[-_.])(pw|auth)([-_.]|$)/i;
/** A name as it stands before "=": "--redis-password", "REDIS_PASS" (checked on the name alone). */
const NAME = /^-{0,2}[\w.-]+$/;
/** Characters that open a quoted or assigned value in a message: "'--redis=redis://..." */
const OPENERS = new Set(['"', "'", '=', '(', '<', '[']);

/**
 * `text` with the credentials of everything that looks like a URL or user:password@host
 * masked (`scheme://user:***@host`, `redis:/:***@host`, `:***@host`), and the value of
 * `--password=...`-like words. Masks generously: a word with a ":" before its last "@".
 * A word is what stands between blanks, except that a quoted argument ("..." as JSON quotes
 * it, '...' as commander does) is part of its word whole, blanks and all: a password with a
 * blank in it is masked whole, not cut in two halves that each look like nothing.
 */
export function maskSecrets(text: string): string {
  let shown = '';
  let from = 0;
  // A quote with no closing one after it: once seen, no later quote of that kind is looked for.
  const unclosed = { '"': false, "'": false };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (/\s/.test(c)) {
      const at = credentialsGoOn(text, from, i);
      if (at > 0) {
        i = at;
        continue;
      }
      shown += maskWord(text.slice(from, i)) + c;
      from = i + 1;
    } else if ((c === '"' || c === "'") && !unclosed[c] && (i === from || OPENERS.has(text[i - 1]))) {
      const end = closingQuote(text, i);
      if (end < 0) unclosed[c] = true;
      else i = end;
    }
  }
  return shown + maskWord(text.slice(from));
}

/**
 * A URL's credentials cut by a blank ("ping http://u:sec ret@h/x failed"): when the word from `from`
 * to the blank at `blank` ends in "scheme:/user:" and something that is not a port, where the "@"
 * that ends them is (on the same line, before another URL), else -1.
 */
function credentialsGoOn(text: string, from: number, blank: number): number {
  if (!OPEN_CREDENTIALS.test(text.slice(from, blank))) return -1;
  const line = text.indexOf('\n', blank);
  const rest = text.slice(blank, line < 0 ? text.length : line);
  const at = rest.indexOf('@');
  return at < 0 || rest.slice(0, at).includes('://') ? -1 : blank + at;
}

/** A word ending in "scheme:/" or "scheme://", a user, ":" and not a port: a password's start. */
const OPEN_CREDENTIALS = /(^|[^\w+.-])[a-z][a-z0-9+.-]*:\/+[^\s@/:]*:(?!\d*(\/|$))[^\s@]*$/i;

/** Where the quote opened at `open` closes ("..." with JSON's \" escapes), or -1. */
function closingQuote(text: string, open: number): number {
  const quote = text[open];
  for (let i = open + 1; i < text.length; i++) {
    if (quote === '"' && text[i] === '\\') i++;
    else if (text[i] === quote) return i;
  }
  return -1;
}

/**
 * A query-string parameter's name whose value is a secret: token, key, secret, password, pass,
 * passwd, pwd, auth, sig, signature, api_key, access_key, credential, session (any case, as part of the
 * name), and pw as a whole word of it (pw, db_pw).
 */
const SECRET_QUERY = /token|key|secret|pass|pwd|auth|sig|credential|session|(^|[-_.])pw([-_.]|$)/i;
/** One `name=value` of a query string (after "?", "&" or ";"), the value up to the next separator. */
const QUERY_PARAM = /([?&;])([^=&;#?\s'"]*)=([^&;#'"]*)/g;

/** `word` with the values of its query-string parameters whose names look secret masked (`?token=***&rid=…`). */
function maskQuery(word: string): string {
  if (!word.includes('?')) return word;
  return word.replace(QUERY_PARAM, (whole, separator: string, name: string, value: string) =>
    SECRET_QUERY.test(name) && value !== '' ? `${separator}${name}=***` : whole,
  );
}

/** One whitespace-free word of `maskSecrets`. */
function maskWord(word: string): string {
  return maskQuery(maskCredentials(word));
}

/** maskWord's user:password@ and --password= part. */
function maskCredentials(word: string): string {
  const at = word.lastIndexOf('@');
  const colon = word.indexOf(':');
  if (at > 0 && colon >= 0 && colon < at) {
    let start = colon;
    while (start > 0 && !OPENERS.has(word[start - 1])) start--;
    return word.slice(0, start) + redactUrl(word.slice(start));
  }
  const eq = word.indexOf('=');
  if (eq <= 0) return word;
  const quote = word[0] === '"' || word[0] === "'" ? word[0] : '';
  const name = word.slice(quote.length, eq);
  if (!NAME.test(name) || !SECRET_NAME.test(name)) return word;
  return `${word.slice(0, eq + 1)}***${quote !== '' && word.endsWith(quote) && word.length > eq + 1 ? quote : ''}`;
}
