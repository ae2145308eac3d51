// The one description of dlock's command line that the completion scripts and the man page are
// generated from: read from the commander program itself, so adding an option in src/cli/ is
// the only step.

import { Help, type Argument, type Command, type Option } from 'commander';

/** What a value is, when a shell can offer something for it. */
export type ValueKind = 'file' | 'pid' | 'key' | 'command' | 'command-line';

export interface OptionSpec {
  short?: string;
  long: string;
  /** The value's placeholder ("duration" in --ttl <duration>), when the option takes one. */
  value?: string;
  choices?: readonly string[];
  kind?: ValueKind;
  repeatable: boolean;
  /** Options that cannot be given with it (its own other spelling included). */
  excludes: string[];
  /** The help text, and its first clause without "(env …; default …)" for completion menus. */
  description: string;
  summary: string;
}

export interface ArgumentSpec {
  name: string;
  description: string;
  required: boolean;
  variadic: boolean;
  choices?: readonly string[];
  kind?: ValueKind;
}

export interface CommandSpec {
  name: string;
  summary: string;
  description: string;
  usage: string;
  options: OptionSpec[];
  arguments: ArgumentSpec[];
  /** Its words after the first argument are a command line of their own (dlock run <key> cmd…). */
  runsCommand: boolean;
}

export interface ProgramSpec {
  name: string;
  summary: string;
  options: OptionSpec[];
  commands: CommandSpec[];
}

const help = new Help();

/** The first clause of a help text, without parentheses: short enough for a completion menu. */
export function summarize(text: string): string {
  return text
    .replace(/\s*\([^()]*\)/g, '')
    .split(/[:;] /)[0]!
    .trim();
}

/** A placeholder names a kind the shells can complete: <file>, <pid>, <key>. */
function kindOf(placeholder: string | undefined): ValueKind | undefined {
  return placeholder === 'file' || placeholder === 'pid' || placeholder === 'key' ? placeholder : undefined;
}

function describeOption(option: Option, siblings: readonly Option[]): OptionSpec {
  const value = /[<[]([^>\]]+?)(?:\.\.\.)?[>\]]/.exec(option.flags)?.[1];
  const spellings = (name: string) => {
    const other = siblings.find((candidate) => candidate.attributeName() === name);
    return other ? [other.short, other.long].filter((flag): flag is string => Boolean(flag)) : [];
  };
  const own = [option.short, option.long].filter((flag): flag is string => Boolean(flag));
  // Set by Option.conflicts(), which commander's typings leave out.
  const conflicts = ((option as Option & { conflictsWith?: string[] }).conflictsWith ?? []).flatMap(spellings);
  return {
    ...(option.short ? { short: option.short } : {}),
    long: option.long ?? option.short!,
    ...(value ? { value } : {}),
    ...(option.argChoices ? { choices: option.argChoices } : {}),
    ...(kindOf(value) ? { kind: kindOf(value) } : {}),
    // Besides choices' own check, dlock gives a parser only to options that collect repeats (--redis).
    repeatable: option.variadic || Boolean(option.parseArg && !option.argChoices),
    excludes: own.length > 1 || conflicts.length > 0 ? [...own, ...conflicts] : [],
    description: option.description,
    summary: summarize(option.description),
  };
}

function describeArgument(argument: Argument): ArgumentSpec {
  const name = argument.name();
  // <key> is a lock name; [command...] the command line run runs; help's [command] a dlock command.
  const command = argument.variadic ? 'command-line' : 'command';
  const kind: ValueKind | undefined = name === 'command' ? command : kindOf(name);
  return {
    name,
    description: argument.description,
    required: argument.required,
    variadic: argument.variadic,
    ...(argument.argChoices ? { choices: argument.argChoices } : {}),
    ...(kind ? { kind } : {}),
  };
}

function describeOptions(command: Command): OptionSpec[] {
  const options = help.visibleOptions(command);
  return options.map((option) => describeOption(option, options));
}

function describeCommand(command: Command): CommandSpec {
  const args = help.visibleArguments(command).map(describeArgument);
  return {
    name: command.name(),
    summary: command.summary() || summarize(command.description()),
    description: command.description(),
    usage: command.usage(),
    options: describeOptions(command),
    arguments: args,
    runsCommand: args.some((argument) => argument.kind === 'command-line'),
  };
}

/** The program's visible commands and options, in --help's order. */
export function describeProgram(program: Command): ProgramSpec {
  return {
    name: program.name(),
    summary: program.description(),
    options: describeOptions(program),
    commands: help.visibleCommands(program).map(describeCommand),
  };
}

/** Every option of a command that takes its value as the next word. */
export function valueOptions(options: readonly OptionSpec[]): string[] {
  const spellings = (option: OptionSpec) => (option.short ? [option.short, option.long] : option.long);
  return options.filter((option) => option.value).flatMap(spellings);
}
