// The bash completion script: the template's logic (word splitting, run's key and command) over
// data generated from the program's description.

import template from './templates/dlock.bash';
import type { ProgramSpec } from './describe.js';
import { valueOptions } from './describe.js';
import { fill, spellings, wrap } from './text.js';
import type { InstallLines } from './install.js';

/** `name='words'`, wrapped over lines (bash reads the newlines as word separators). */
function variable(name: string, words: readonly string[]): string {
  return `${name}='${wrap(words, '    ', ' ', 100, name.length + 2).join('\n')}'`;
}

/** One case arm: quoted alternatives, wrapped with backslash-newline, then its body. */
function arm(patterns: readonly string[], body: string): string {
  const alternatives = wrap(patterns, '', ' | ').join(' | \\\n        ');
  return `        ${alternatives})\n            ${body}\n            ;;`;
}

/** A case over "$1 $2" (command and option, or command and operand number) from pattern -> body. */
function caseFunction(comment: string, name: string, arms: Map<string, string[]>): string {
  const body = [...arms].map(([action, patterns]) => arm(patterns, action)).join('\n');
  return `# ${comment}\n${name}() {\n    case "$1 $2" in\n${body}\n        *) return 1 ;;\n    esac\n}`;
}

function add(arms: Map<string, string[]>, action: string, pattern: string): void {
  arms.set(action, [...(arms.get(action) ?? []), pattern]);
}

const words = (list: readonly string[]) => `COMPREPLY=($(compgen -W '${list.join(' ')}' -- "$cur"))`;

export function renderBash(spec: ProgramSpec, install: InstallLines): string {
  const values = new Map<string, string[]>();
  const operands = new Map<string, string[]>();
  const data = [
    variable(
      '_dlock_commands',
      spec.commands.map((command) => command.name),
    ),
    variable('_dlock_global_opts', spec.options.flatMap(spellings)),
    variable(
      '_dlock_runs_command',
      spec.commands.filter((command) => command.runsCommand).map(({ name }) => name),
    ),
    "# Each command's options, and those of them that take the next word as their value.",
  ];
  for (const command of spec.commands) {
    const name = command.name.replace(/-/g, '_');
    data.push(variable(`_dlock_opts_${name}`, command.options.flatMap(spellings)));
    data.push(variable(`_dlock_value_opts_${name}`, valueOptions(command.options)));
    for (const option of command.options) {
      const action = option.choices
        ? words(option.choices)
        : option.kind === 'file'
          ? '_dlock_files'
          : option.kind === 'pid'
            ? '_dlock_pids'
            : undefined;
      if (action) for (const flag of spellings(option)) add(values, action, `'${command.name} ${flag}'`);
    }
    command.arguments.forEach((argument, index) => {
      const action = argument.choices
        ? words(argument.choices)
        : argument.kind === 'key'
          ? '_dlock_keys'
          : argument.kind === 'command'
            ? 'COMPREPLY=($(compgen -W "$_dlock_commands" -- "$cur"))'
            : undefined;
      if (action) add(operands, action, argument.variadic ? `'${command.name} '*` : `'${command.name} ${index}'`);
    });
  }
  data.push(
    '',
    caseFunction('Offer a value for option $2 of command $1; false for none.', '_dlock_option_value', values),
    '',
    caseFunction('Offer operand number $2 (from 0) of command $1.', '_dlock_operand', operands),
  );
  return fill(template, { INSTALL: install.bash.map((line) => `#   ${line}`).join('\n'), DATA: data.join('\n') });
}
