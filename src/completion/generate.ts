// Entry for scripts/build-completions.mjs and scripts/build-man.mjs: dlock's program, described.

import { buildProgram } from '../cli/program.js';
import { renderBash } from './bash.js';
import { describeProgram, type ProgramSpec } from './describe.js';
import { renderFish } from './fish.js';
import { INSTALL_LINES, type Shell } from './install.js';
import { renderZsh } from './zsh.js';

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
