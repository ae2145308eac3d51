// What the chosen backend can do, decided once from the targets: `config` and the CLI refuse an
// option from this statement, never by counting URLs. One Redis (a server, Sentinel, Cluster) runs
// the line (docs/reference/waiting-in-line.md) and keeps the history; a Redlock quorum of
// independent servers has neither (docs/operations/deployments.md).

export interface Capabilities {
  /** What the backend is, for messages: "one Redis" or "a Redlock quorum of 3". */
  readonly name: string;
  /** A FIFO line of waiters. */
  readonly line: boolean;
  /** --slots n: at most n holders at once. */
  readonly slots: boolean;
  /** --shared: readers together, never with a writer. */
  readonly shared: boolean;
  /** The per-key history stream (dlock history, the events it records). */
  readonly history: boolean;
  /** --once-per: the done mark a release writes. */
  readonly oncePer: boolean;
}

/** The statement for `instances` configured targets (1: one Redis; more: a Redlock quorum). */
export function capabilitiesOf(instances: number): Capabilities {
  if (instances <= 1) return { name: 'one Redis', line: true, slots: true, shared: true, history: true, oncePer: true };
  const name = `a Redlock quorum of ${instances}`;
  return { name, line: false, slots: false, shared: false, history: false, oncePer: false };
}

/** How the usage errors name what is needed instead. */
export const ONE_REDIS = 'one Redis (a server, redis+sentinel:// or redis+cluster://)';
