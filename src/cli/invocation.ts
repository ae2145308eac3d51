// What the command line decides, and what each command's declaration gets to decide it with.

import type {
  AcquireConfig,
  DoctorConfig,
  Env,
  HistoryConfig,
  HoldCommandConfig,
  MetricsConfig,
  RawOptions,
  ReleaseConfig,
  RenewConfig,
  RunConfig,
  ServeConfig,
  StatusConfig,
  UnholdConfig,
} from '../config/index.js';

export type Shell = 'bash' | 'zsh' | 'fish';

/** Runs the decided command: imported only then, so that `dlock run` loads no other command's code. */
type Runs = { run: () => Promise<number> };

/** What the CLI decided to do: a command, its validated config (src/config/), and how to run it. */
export type Invocation =
  | ({ command: 'run'; config: RunConfig } & Runs)
  | ({ command: 'acquire'; config: AcquireConfig } & Runs)
  | ({ command: 'keeper'; config: AcquireConfig } & Runs)
  | ({ command: 'renew' } & RenewConfig & Runs)
  | ({ command: 'release' } & ReleaseConfig & Runs)
  | ({ command: 'hold'; config: HoldCommandConfig } & Runs)
  | ({ command: 'unhold' } & UnholdConfig & Runs)
  | ({ command: 'status' } & StatusConfig & Runs)
  | ({ command: 'history' } & HistoryConfig & Runs)
  | ({ command: 'doctor' } & DoctorConfig & Runs)
  | ({ command: 'metrics' } & MetricsConfig & Runs)
  | ({ command: 'serve' } & ServeConfig & Runs)
  | ({ command: 'completion'; shell: Shell } & Runs)
  | ({ command: 'complete-keys' } & Runs)
  | ({ command: 'heartbeat' } & Runs);

/** What a command's declaration (src/cli/<command>.ts) needs from the program it joins. */
export interface CommandLine {
  env: Env;
  /** The whole command line, which `acquire` hands to its keeper to parse again. */
  argv: string[];
  /** Records the decision; the program's parse returns it. */
  decide: (invocation: Invocation) => void;
  /** The command's own options over dlock's (-q/-v before the command). */
  withGlobals: <T extends RawOptions>(options: T) => T;
  /** Parses another command line the same way (the keeper's copy of its acquire). */
  parse: (argv: string[]) => Invocation;
}
