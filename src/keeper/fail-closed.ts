// What `dlock acquire` prints on stdout when it fails: a line that stops the script that evals
// it, with acquire's own exit status. An empty output would make `eval` succeed, and the steps
// after `eval "$(dlock acquire ...)" || exit` (or under `set -e`) would run without the lock. A
// status alone is not enough: POSIX turns `set -e` off inside a function called from `||`, `if`,
// `&&` or `!`, so a non-interactive shell is made to `exit`; an interactive one (`$-` has `i`)
// gets the status from a subshell and stays open.

/**
 * The line for eval: in dash, bash and zsh, `exit 75` in a script, `(exit 75)` at a prompt. fish
 * rejects it (eval fails with 123): fish scripts check acquire's status before eval.
 */
export function failureLine(exitCode: number): string {
  return `case $- in *i*) (exit ${exitCode}) ;; *) exit ${exitCode} ;; esac\n`;
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
