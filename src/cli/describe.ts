// Entry for scripts/build-completions.mjs and scripts/build-man.mjs: dlock's program, described
// (by ../completion/describe.ts) and rendered as each shell's completion script. A build-time entry
// beside the program it describes, so that cli/ imports completion/ and never the other way.

import { renderBash } from '../completion/bash.js';
import { describeProgram, type ProgramSpec } from '../completion/describe.js';
import { renderFish } from '../completion/fish.js';
import { INSTALL_LINES, type Shell } from '../completion/install.js';
import { renderZsh } from '../completion/zsh.js';
import { buildProgram } from './program.js';

/** The commands and options of `dlock`, as --help shows them. */
export function describeDlock(): ProgramSpec {
  return describeProgram(buildProgram({}, () => {}));
}

/** The completion script of each shell, as completions/dlock.<shell> should hold it. */
export function completionScripts(): Record<Shell, string> {
  const spec = describeDlock();
  const install = INSTALL_LINES;
  return { bash: renderBash(spec, install), zsh: renderZsh(spec, install), fish: renderFish(spec, install) };
}
