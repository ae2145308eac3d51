// The zsh completion script: one _arguments spec per option and operand, generated from the
// program's description, under the template's logic (global options, run's key and command).

import template from './templates/dlock.zsh';
import type { ArgumentSpec, OptionSpec, ProgramSpec } from './describe.js';
import { valueOptions } from './describe.js';
import type { InstallLines } from './install.js';
import { continued, fill, quote, spellings } from './text.js';

/** Options after which nothing else is completed. */
const STOPPING = ['--help', '--version'];

/** Text inside an _arguments :message: field. */
function field(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/([[\]:])/g, '\\$1');
}

/** Text inside an _arguments [description]. */
function description(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/([[\]])/g, '\\$1');
}

function action(kind: string | undefined, choices: readonly string[] | undefined): string {
  if (choices) return `(${choices.join(' ')})`;
  return kind === 'file' ? '_files' : kind === 'pid' ? '_pids' : kind === 'key' ? '_dlock_keys' : '';
}

/** One option as _arguments specs: '(excluded)'{-t+,--ttl=}'[description]:value:action'. */
export function optionSpec(option: OptionSpec): string {
  const stops = STOPPING.includes(option.long);
  const excluded = stops ? '(- *)' : option.excludes.length > 0 ? `(${option.excludes.join(' ')})` : '';
  const repeat = option.repeatable ? '*' : '';
  const names = spellings(option).map((flag) => (option.value ? `${flag}${flag.startsWith('--') ? '=' : '+'}` : flag));
  const value = option.value ? `:${field(option.value)}:${action(option.kind, option.choices)}` : '';
  const rest = `[${description(option.summary)}]${value}`;
  if (names.length === 1) return quote(`${excluded}${repeat}${names[0]}${rest}`);
  return `${excluded || repeat ? quote(`${excluded}${repeat}`) : ''}{${names.join(',')}}${quote(rest)}`;
}

/** An operand's _arguments spec (none for run's command line, which _dlock_command_line completes). */
function operandSpecs(argument: ArgumentSpec, index: number, commands: string[]): string[] {
  if (argument.kind === 'command-line') return [];
  const position = argument.variadic ? '*' : String(index + 1);
  const choices = argument.kind === 'command' ? commands : argument.choices;
  const optional = argument.required ? '' : ':';
  return [quote(`${position}:${optional}${field(argument.name)}:${action(argument.kind, choices)}`)];
}

/** `name=(...)` or `local -a name=(...)`, one element a line. */
function array(declaration: string, items: readonly string[]): string {
  return `  ${declaration}=(\n${items.map((item) => `    ${item}`).join('\n')}\n  )`;
}

export function renderZsh(spec: ProgramSpec, install: InstallLines): string {
  const names = spec.commands.map((command) => command.name);
  const functions = spec.commands.map((command) => {
    const lines = [`_dlock_cmd_${command.name}() {`];
    const values = valueOptions(command.options);
    if (command.runsCommand) lines.push(`${continued('  _dlock_command_line', values, '    ')} && return`);
    const specs = [
      ...command.options.map(optionSpec),
      ...command.arguments.flatMap((argument, index) => operandSpecs(argument, index, names)),
    ];
    lines.push(`  _arguments -s : \\\n${specs.map((item) => `    ${item}`).join(' \\\n')}`, '}');
    return lines.join('\n');
  });
  const flags = spec.options.filter((option) => !option.value && !STOPPING.includes(option.long));
  const globals = [
    array('local -a global_options', spec.options.map(optionSpec)),
    `  local -a global_flags=(${flags.flatMap(spellings).join(' ')})`,
    "  # Not `commands`: that name is zsh's hash of the commands on $PATH, which _normal needs.",
    array(
      'local -a dlock_commands',
      spec.commands.map(({ name, summary }) => quote(`${name}:${field(summary)}`)),
    ),
  ];
  return fill(template, {
    INSTALL: install.zsh.map((line) => `#   ${line}`).join('\n'),
    COMMANDS: functions.join('\n\n'),
    GLOBALS: globals.join('\n'),
  });
}
