// What `dlock acquire` prints on stdout when it fails: a line that makes `eval` fail with
// acquire's own exit status. An empty output would make `eval` succeed, and the steps after
// `eval "$(dlock acquire ...)" || exit` (or under `set -e`) would run without the lock. A
// subshell, so an interactive shell that evals it stays open.

/** The line for eval: `(exit 75)` fails with 75 in every POSIX shell, bash and zsh. */
export function failureLine(exitCode: number): string {
  return `(exit ${exitCode})\n`;
}

const COMMANDS = new Set(['run', 'status', 'acquire', 'renew', 'release', 'history', 'doctor', 'completion', 'help']);

/**
 * Whether a command line that could not be parsed is an acquire whose stdout is for eval: its
 * first command word is `acquire` and it does not ask for `--json` or `--format json` (stdout stays
 * empty for a JSON reader).
 */
export function acquireForEval(argv: string[]): boolean {
  const words = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
  if (words.find((word) => COMMANDS.has(word)) !== 'acquire') return false;
  const json = (word: string, i: number) =>
    word === '--json' || word === '--format=json' || (word === '--format' && words[i + 1] === 'json');
  return !words.some(json);
}
