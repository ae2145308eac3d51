// dlock completion <shell>: print the completion script. The scripts in completions/ are
// embedded into the bundle as text at build time, so printing one never reads the disk.

import bash from '../../completions/dlock.bash';
import fish from '../../completions/dlock.fish';
import zsh from '../../completions/dlock.zsh';
import { stdout } from '../output.js';

export const COMPLETIONS = { bash, zsh, fish } as const;

export async function completion(shell: keyof typeof COMPLETIONS): Promise<number> {
  stdout.write(COMPLETIONS[shell]);
  return 0;
}
