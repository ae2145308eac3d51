// A key's history, as a backend that keeps one reports it.

/** The history stream's cap (the Redis backend's XADD MAXLEN), and so the most `dlock history --count` shows. */
export const HISTORY_MAX = 1000;
