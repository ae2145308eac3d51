// A key's history, as a backend that keeps one reports it.

/** The history stream's cap (the Redis backend's XADD MAXLEN), and so the most `dlock history --count` shows. */
export const HISTORY_MAX = 1000;

/** One history entry (scripts.ts HISTORY): the stream ID's time, the event, and its fields (cut). */
export interface HistoryEntry {
  id: string;
  /** Server ms (from the stream ID); undefined when no date has it (a forged ID such as 9000000000000000-1). */
  ms: number | undefined;
  event: string;
  fields: Record<string, string>;
}
