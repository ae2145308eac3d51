// Helpers the completion renderers share: filling a template, wrapping word lists.

/** `template` with each line holding only `@NAME@` replaced by `parts[NAME]`. */
export function fill(template: string, parts: Record<string, string>): string {
  return template.replace(/^@([A-Z_]+)@$/gm, (line, name: string) => {
    const part = parts[name];
    if (part === undefined) throw new Error(`completion template: no text for ${line}`);
    return part;
  });
}

/**
 * `words` joined by `separator` into lines of at most `width` characters (the first after
 * `start` characters of its own), later lines indented.
 */
export function wrap(words: readonly string[], indent: string, separator = ' ', width = 100, start = 0): string[] {
  const lines: string[] = [];
  for (const word of words) {
    const last = lines.at(-1);
    const taken = lines.length === 1 ? start : 0;
    if (last !== undefined && taken + last.length + separator.length + word.length <= width) {
      lines[lines.length - 1] = `${last}${separator}${word}`;
    } else {
      lines.push(last === undefined ? word : `${indent}${word}`);
    }
  }
  return lines;
}

/** `words` after `head`, continued with backslash-newline over lines of at most `width`. */
export function continued(head: string, words: readonly string[], indent: string, width = 110): string {
  return [head, ...words].reduce((text, word) => {
    const line = text.slice(text.lastIndexOf('\n') + 1);
    return line.length + 1 + word.length + 2 <= width ? `${text} ${word}` : `${text} \\\n${indent}${word}`;
  });
}

/** The short and long spellings of an option. */
export function spellings(option: { short?: string; long: string }): string[] {
  return option.short ? [option.short, option.long] : [option.long];
}

/** Single-quoted for a POSIX shell or fish (' closes, \' inserts one, ' reopens). */
export function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
