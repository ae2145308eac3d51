// Docs that run: the shell examples of README.md and docs/ as transcripts (trycmd, cram). A
// ```console block is a shell session: `$ cmd` lines (`> ` continues one), then the output the
// terminal shows (stdout and stderr together), then `[exit N]` when the status is not 0. `[..]`
// in an output line stands for any text, and a line `...` for any number of lines. A block the
// harness cannot run is preceded by `<!-- not run: reason -->`; its commands are parse-checked.

import { spawn, spawnSync } from 'node:child_process';

export type Shell = 'sh' | 'bash' | 'zsh' | 'fish';

export interface Command {
  /** The command as the shell reads it (continuation lines joined by newlines). */
  text: string;
  /** The expected output lines, placeholders included. */
  expected: string[];
  /** The expected exit status (`[exit N]`, else 0). */
  status: number;
}

export interface Block {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's language (`console`, `sh`, `yaml`, ...) and the words after it. */
  lang: string;
  words: string[];
  body: string;
  /** The reason given by `<!-- not run: reason -->` just above the fence, if any. */
  notRun?: string;
}

/** Every fenced code block of a markdown text, with the not-run mark above it. */
export function blocksOf(file: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [lang = '', ...words] = open[3].trim().split(/\s+/);
    const body: string[] = [];
    let j = i + 1;
    const close = `${open[1]}${open[2]}`;
    for (; j < lines.length && !lines[j].startsWith(close); j++) body.push(lines[j].slice(open[1].length));
    let k = i - 1;
    while (k >= 0 && lines[k].trim() === '') k--;
    const mark = k >= 0 ? /^<!-- not run: (.+) -->$/.exec(lines[k].trim()) : null;
    blocks.push({ file, line: i + 1, lang, words, body: body.join('\n'), notRun: mark?.[1] });
    i = j;
  }
  return blocks;
}

/** The shell a console block names (```console bash); plain `console` is sh. */
export function shellOf(block: Block): Shell {
  const named = block.words.find((word) => ['sh', 'bash', 'zsh', 'fish'].includes(word));
  return (named ?? 'sh') as Shell;
}

/** A console block's commands, each with its expected output and status. */
export function parseTranscript(body: string): Command[] {
  const commands: Command[] = [];
  let current: Command | undefined;
  let continuing = false;
  for (const line of body.split('\n')) {
    if (line.startsWith('$ ')) {
      current = { text: line.slice(2), expected: [], status: 0 };
      commands.push(current);
      continuing = true;
    } else if (current && continuing && line.startsWith('> ')) {
      current.text += `\n${line.slice(2)}`;
    } else if (current) {
      continuing = false;
      const exit = /^\[exit (\d+)\]$/.exec(line);
      if (exit) current.status = Number(exit[1]);
      else current.expected.push(line);
    } else if (line.trim() !== '') {
      throw new Error(`output before the first "$ " command: ${line}`);
    }
  }
  for (const command of commands) while (command.expected.at(-1) === '') command.expected.pop();
  return commands;
}

const MARK = '@@dlock-transcript';

/** The script that runs the commands in one shell and prints a marker with each status. */
export function scriptOf(commands: Command[], shell: Shell): string {
  const status = shell === 'fish' ? '$status' : '$?';
  return commands.map((command) => `${command.text}\nprintf '\\n${MARK} %s\\n' ${status}\n`).join('');
}

export interface Actual {
  output: string[];
  status: number;
}

/** Split the shell's output at the markers: each command's output lines and status. */
export function splitOutput(stream: string, shellStatus: number | null, count: number): Actual[] {
  const results: Actual[] = [];
  let rest = stream;
  for (let i = 0; i < count; i++) {
    const at = rest.indexOf(`\n${MARK} `);
    if (at < 0) {
      // The command ended the shell (`|| exit`): what is left is its output, the shell's status is its own.
      results.push({ output: linesOf(rest), status: shellStatus ?? -1 });
      break;
    }
    const end = rest.indexOf('\n', at + 1 + MARK.length + 1);
    results.push({ output: linesOf(rest.slice(0, at)), status: Number(rest.slice(at + MARK.length + 2, end)) });
    rest = rest.slice(end + 1);
  }
  return results;
}

function linesOf(text: string): string[] {
  const lines = text.split('\n');
  while (lines.at(-1) === '') lines.pop();
  return lines;
}

/** Whether output lines match the expected ones: `[..]` is any text in a line, `...` any lines. */
export function matches(expected: string[], actual: string[]): boolean {
  if (expected.length === 0) return actual.length === 0;
  const [first, ...rest] = expected;
  if (first === '...') return actual.some((_, i) => matches(rest, actual.slice(i))) || matches(rest, []);
  if (actual.length === 0 || !lineMatches(first, actual[0])) return false;
  return matches(rest, actual.slice(1));
}

function lineMatches(expected: string, actual: string): boolean {
  if (!expected.includes('[..]')) return expected === actual;
  const pattern = expected
    .split('[..]')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`).test(actual);
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** Run a transcript's commands in one session of its shell; stdout and stderr merged. */
export function runTranscript(commands: Command[], shell: Shell, options: RunOptions): Promise<Actual[]> {
  const script = scriptOf(commands, shell);
  const args = shell === 'fish' ? ['--no-config', '-c', script] : ['-c', script];
  const file = shell === 'sh' ? '/bin/sh' : shell;
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stream = '';
    child.stdout.on('data', (data) => (stream += data));
    child.stderr.on('data', (data) => (stream += data));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the transcript did not finish within ${timeoutMs}ms; output so far:\n${stream}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(splitOutput(stream, code, commands.length));
    });
  });
}

/** Every difference between a transcript and a run of it, as readable text ('' when none). */
export function differences(commands: Command[], actual: Actual[]): string {
  const problems: string[] = [];
  commands.forEach((command, i) => {
    const got = actual[i];
    if (!got) return problems.push(`$ ${command.text}\n  did not run (an earlier command ended the shell)`);
    if (got.status !== command.status) {
      problems.push(`$ ${command.text}\n  exit ${got.status}, documented ${command.status}`);
    }
    if (!matches(command.expected, got.output)) {
      problems.push(`$ ${command.text}\n  documented:\n${indent(command.expected)}\n  printed:\n${indent(got.output)}`);
    }
  });
  return problems.join('\n');
}

function indent(lines: string[]): string {
  return lines.map((line) => `    | ${line}`).join('\n');
}

/** Parse-check shell text without running it (`sh -n`, `bash -n`, `zsh -n`, `fish -n`). */
export function parseCheck(text: string, shell: Shell): string {
  const file = shell === 'sh' ? '/bin/sh' : shell;
  const result = spawnSync(file, ['-n'], { input: text, encoding: 'utf8' });
  return result.status === 0 ? '' : `${shell} -n: ${result.stderr.trim() || `exit ${result.status}`}`;
}

/**
 * The shell commands inside a block that is not run: a console block's commands, a shell
 * block as it is, the `run:`/`script:` steps of CI YAML, `sh '…'` steps of a Jenkinsfile,
 * the command of a crontab line, `ExecStart=` of a unit, a Kubernetes `args` string.
 */
export function commandsOf(block: Block): string[] {
  const body = block.body;
  switch (block.lang) {
    case 'console':
      return parseTranscript(body).map((command) => command.text);
    case 'sh':
    case 'bash':
    case 'shell':
      return [body];
    case 'cron':
      return lines(body, /^[^#\s]/).map((line) => line.split(/\s+/).slice(5).join(' '));
    case 'ini':
      return lines(body, /^ExecStart=/).map((line) => line.slice('ExecStart='.length));
    case 'groovy':
      return [...body.matchAll(/\bsh\s+'([^']*)'/g)].map((match) => match[1]);
    case 'yaml':
      return yamlCommands(body);
    default:
      return [];
  }
}

/** The lines of a text that match a pattern. */
function lines(text: string, pattern: RegExp): string[] {
  return text.split('\n').filter((line) => pattern.test(line));
}

/** Shell text in CI YAML: `run:` (GitHub), `script:` items (GitLab), `- |` blocks, k8s `args`. */
function yamlCommands(body: string): string[] {
  const lines = body.split('\n');
  const out: string[] = [];
  let listOwner = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const indentOf = (text: string) => text.length - text.trimStart().length;
    const key = /^(\s*)(?:- )?(run|script|before_script|after_script|args|command):\s*(.*)$/.exec(line);
    const item = /^(\s*)- (.*)$/.exec(line);
    let text: string | undefined;
    let start = i;
    if (key) {
      const value = key[3].trim();
      if (/^[|>][-+]?(\s+#.*)?$/.test(value)) text = '';
      else if (value === '' && (key[2] === 'script' || key[2].endsWith('_script'))) {
        listOwner = indentOf(line);
        continue;
      } else if (value.startsWith('[')) {
        // args: ["-c", "…"]: the last string is the shell text.
        const strings = JSON.parse(value) as string[];
        text = strings.at(-1);
        out.push(text ?? '');
        continue;
      } else text = value;
    } else if (item && listOwner >= 0 && indentOf(line) >= listOwner) {
      const value = item[2].trim();
      text = /^[|>][-+]?(\s+#.*)?$/.test(value) ? '' : value;
    } else {
      if (line.trim() && indentOf(line) <= listOwner) listOwner = -1;
      continue;
    }
    if (text === '') {
      const block: string[] = [];
      const base = indentOf(lines[start]);
      const inBlock = (line: string) => line.trim() === '' || indentOf(line) > base;
      for (start = i + 1; start < lines.length && inBlock(lines[start]); start++) block.push(lines[start]);
      const cut = Math.min(...block.filter((l) => l.trim()).map(indentOf));
      text = block.map((l) => l.slice(cut)).join('\n');
      i = start - 1;
    }
    out.push(text);
  }
  return out.filter((text) => text.trim() !== '');
}
