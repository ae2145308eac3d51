// The fish completion script: `complete` lines generated from the program's description, each
// option once with the commands that have it, under the template's functions.

import template from './templates/dlock.fish';
import type { OptionSpec, ProgramSpec } from './describe.js';
import { valueOptions } from './describe.js';
import type { InstallLines } from './install.js';
import { continued, fill, quote } from './text.js';

/** The arguments of `complete` for one option, after its condition. */
function optionArguments(option: OptionSpec): string {
  const names = [option.short ? `-s ${option.short.slice(1)}` : '', `-l ${option.long.replace(/^--?/, '')}`];
  const value = !option.value
    ? ''
    : option.choices
      ? `-x -a ${quote(option.choices.join(' '))}`
      : option.kind === 'file'
        ? '-r -F'
        : option.kind === 'pid'
          ? "-x -a '(__fish_complete_pids)'"
          : '-x';
  return [...names, value, `-d ${quote(option.summary)}`].filter(Boolean).join(' ');
}

export function renderFish(spec: ProgramSpec, install: InstallLines): string {
  const names = spec.commands.map((command) => command.name);
  const runners = spec.commands.filter((command) => command.runsCommand).map(({ name }) => name);
  const valueCases = spec.commands.map((command) => {
    const list = continued("            printf '%s\\n'", valueOptions(command.options), '                ');
    return `        case ${command.name}\n${list}`;
  });
  const data = [
    `set -g __dlock_runs_command ${runners.join(' ')}`,
    '',
    '# The options of command $argv[1] that take the next word as their value.',
    `function __dlock_value_options\n    switch $argv[1]\n${valueCases.join('\n')}\n    end\nend`,
  ];
  // Each option once, with every command that has it alike.
  const options = new Map<string, string[]>();
  for (const command of spec.commands) {
    for (const option of command.options) {
      const line = optionArguments(option);
      options.set(line, [...(options.get(line) ?? []), command.name]);
    }
  }
  const operands = spec.commands.flatMap((command) =>
    command.arguments.flatMap((argument, index) => {
      const choices = argument.kind === 'command' ? names : argument.choices;
      const offer = choices ? quote(choices.join(' ')) : argument.kind === 'key' ? "'(__dlock_keys)'" : undefined;
      const more = argument.variadic ? ' +' : '';
      return offer ? [`complete -c dlock -n '__dlock_operand ${command.name} ${index + 1}${more}' -a ${offer}`] : [];
    }),
  );
  const lines = [
    '# dlock [options] <command>',
    ...spec.options.map((option) => `complete -c dlock -n '__dlock_using' ${optionArguments(option)}`),
    ...spec.commands.map(({ name, summary }) => `complete -c dlock -n '__dlock_using' -a ${name} -d ${quote(summary)}`),
    '',
    '# The options of each command',
    ...[...options].map(([line, commands]) =>
      continued(`complete -c dlock -n ${quote(`__dlock_using ${commands.join(' ')}`)}`, [line], '  '),
    ),
    '',
    '# Operands: lock names, shells, commands',
    ...operands,
  ];
  return fill(template, {
    INSTALL: install.fish.map((line) => `#   ${line}`).join('\n'),
    DATA: data.join('\n'),
    COMPLETE: lines.join('\n'),
  });
}
