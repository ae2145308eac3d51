// The holder kinds (alone, --shared, --slots n) and, in one table, what each does differently:
// the option that asks for it (its spelling and --help line, and which options it cannot be given
// with), whether its holders share the lock, how status, the spinner and the errors describe it,
// and what a nested dlock may ask under a hold of it (docs/reference/waiting-in-line.md). Pure: the
// engine, views, errors, config and the CLI read the table instead of deciding by kind. A new kind
// is a member of HoldMode, a row here and its clause in the Redis line scripts (line-lib.lua's
// counted or mode_of); one Redis holds every kind here, other stores say which in their Capabilities.

/** How a dlock holds a key: alone, shared with other shared holders, or as one of n. */
export type HoldMode = { kind: 'exclusive' } | { kind: 'shared' } | { kind: 'slots'; slots: number };

/** The kind alone, as the line scripts store it (a hash's and a waiter's `mode`, a mismatch reply). */
export type HolderKind = HoldMode['kind'];

/**
 * What one kind does differently. `n` is the mode's number: n for --slots n, else 1 (slotsOf);
 * `slot` a holder's slot, undefined for holders without one (or forged details without one).
 */
export interface KindRow {
  /**
   * The option that asks for this kind, `--<kind>` (commander hands it over as RawOptions[kind]): its
   * short spelling, its argument (a kind counted up to n: `<n>`, where n = 1 is a lock alone) and its
   * --help line. The CLI declares them in the table's order.
   */
  flag: { short?: string; argument?: '<n>'; help: string };
  /**
   * The usage error when this kind's option (with number `n`) is given with the option of `earlier`,
   * a kind above it in the table; undefined: they go together (--exclusive with --slots 1).
   */
  together(earlier: HolderKind, n: number): string | undefined;
  /** Several hold at once, each under its own lease in the lock's hash; else one holder owns the hash. */
  manyHolders: boolean;
  /** Each holder has a slot, 0 … n−1 (DLOCK_SLOT). */
  slotted: boolean;
  /** How many may hold at once with number `n` (dlock metrics); undefined: no bound (--shared). */
  capacity(n: number): number | undefined;
  /** The mode of this kind with number `n`. */
  mode(n: number): HoldMode;
  /** A waiter of this kind in status' MODE column of the line. */
  waiterName: string;
  /** The JSON fields that say how a holder holds (status --json, the acquired event). */
  holderFields(slot: number | undefined): { slot?: number; shared?: true };
  /** After "held by host pid N" (the spinner, the busy message, release --force). */
  holderSuffix(slot: number | undefined): string;
  /** status' SLOT/MODE cell of a holder, and its tag in the list of held locks ("slot 2"). */
  holderCell(slot: number | undefined): string | undefined;
  holderTag(slot: number | undefined): string | undefined;
  /** The spinner's and busy message's summary of `count` holders ("2 of 3 slots taken"). */
  taken(n: number, count: number): string;
  /** status' title over the table of `count` holders. */
  heldBy(n: number, count: number): string;
  /** 64, in use otherwise: how the key is in use, and what this run asked for. */
  usedAs(n: number): string;
  askedFor(n: number): string;
  /** A nested dlock refused: how the parent holds, and what the nested call asks. */
  heldAs(n: number): string;
  askedAs(n: number): string;
  /**
   * Why a hold of this kind does not give a nested call what it asks (it would run beside
   * holders it must exclude, or count slots the key does not have); undefined when it does.
   */
  refuses(n: number, asked: HoldMode): string | undefined;
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

export const MODES: Record<HolderKind, KindRow> = {
  exclusive: {
    flag: { short: '-x', help: 'one holder at a time: the default (flock -x; -e also works)' },
    together: () => undefined,
    manyHolders: false,
    slotted: false,
    capacity: () => 1,
    mode: () => ({ kind: 'exclusive' }),
    waiterName: 'exclusive',
    holderFields: () => ({}),
    holderSuffix: () => '',
    holderCell: () => undefined,
    holderTag: () => undefined,
    taken: (_, count) => `held by ${plural(count, 'holder')}`,
    heldBy: (_, count) => `held by ${plural(count, 'holder')}`,
    usedAs: () => 'as a lock (one holder at a time)',
    askedFor: () => 'a lock without --slots',
    heldAs: () => 'alone (exclusive)',
    askedAs: () => 'an exclusive',
    refuses: (_, asked) => (MODES[asked.kind].slotted ? 'would have no slot of its own' : undefined),
  },
  shared: {
    flag: { short: '-s', help: 'hold together with other --shared holders, never with an exclusive one (flock -s)' },
    together: () => '--exclusive and --shared: choose one',
    manyHolders: true,
    slotted: false,
    capacity: () => undefined,
    mode: () => ({ kind: 'shared' }),
    waiterName: 'shared',
    holderFields: () => ({ shared: true }),
    holderSuffix: () => ' (shared)',
    holderCell: () => 'shared',
    holderTag: () => 'shared',
    taken: (_, count) => `held by ${plural(count, 'shared holder')}`,
    heldBy: (_, count) => `held by ${plural(count, 'shared holder')} (--shared)`,
    usedAs: () => 'as a lock (--shared holders)',
    askedFor: () => 'a lock without --slots',
    heldAs: () => 'as --shared',
    askedAs: () => 'a --shared',
    refuses: (_, asked) => {
      if (asked.kind === 'exclusive') return 'would run beside the other readers';
      return MODES[asked.kind].slotted ? 'would have no slot of its own' : undefined;
    },
  },
  slots: {
    flag: {
      argument: '<n>',
      help: 'up to n holders at once, each with its own slot (DLOCK_SLOT) and fencing token (default 1)',
    },
    together: (earlier, n) => {
      if (earlier === 'shared') return '--shared and --slots: choose one (--shared holders have no slots)';
      return n > 1 ? `--exclusive and --slots ${n}: choose one (--slots lets ${n} hold at once)` : undefined;
    },
    manyHolders: true,
    slotted: true,
    capacity: (n) => n,
    mode: (n) => ({ kind: 'slots', slots: n }),
    waiterName: 'slot',
    holderFields: (slot) => (slot === undefined ? {} : { slot }),
    holderSuffix: (slot) => (slot === undefined ? '' : ` in slot ${slot}`),
    holderCell: (slot) => (slot === undefined ? undefined : String(slot)),
    holderTag: (slot) => (slot === undefined ? undefined : `slot ${slot}`),
    taken: (n, count) => `${count} of ${n} slots taken`,
    heldBy: (n, count) => `held, ${count} of ${n} slots taken (--slots ${n})`,
    usedAs: (n) => `with --slots ${n}`,
    askedFor: (n) => `--slots ${n}`,
    heldAs: (n) => `as one of --slots ${n}`,
    askedAs: (n) => `a --slots ${n}`,
    refuses: (n, asked) => {
      if (asked.kind === 'exclusive') return 'would run beside the holders of the other slots';
      if (asked.kind === 'shared') return 'would run beside the holders of the other slots, which are not readers';
      return asked.slots === n ? undefined : `would count ${asked.slots} slots where the key has ${n}`;
    },
  },
};

/** The kinds in the table's order (the CLI's options, the order their conflicts are checked in). */
export const KINDS = Object.keys(MODES) as HolderKind[];

/** The mode's number: n for --slots n, else 1 (the line scripts' n, the turn estimate's). */
export function slotsOf(mode: HoldMode): number {
  return 'slots' in mode ? mode.slots : 1;
}

/** A kind the line scripts store, from a field anyone who can write to Redis could forge. */
export function isHolderKind(value: unknown): value is HolderKind {
  return typeof value === 'string' && Object.hasOwn(MODES, value);
}

/** Why a hold of mode `held` does not give a nested call what it asks (`asked`); undefined when it does. */
export function nestedRefusal(held: HoldMode, asked: HoldMode): string | undefined {
  return MODES[held.kind].refuses(slotsOf(held), asked);
}
