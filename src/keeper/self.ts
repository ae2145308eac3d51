// How to start dlock again (the keeper): the npm build runs `node bin/dlock`, the standalone
// executable (Bun) runs itself, its own script being inside it (/$bunfs/...).

import { resolve } from 'node:path';

export function selfCommand(): { file: string; args: string[] } {
  const script = process.argv[1];
  if (!script || script.startsWith('/$bunfs/') || script.startsWith('B:/~BUN/'))
    return { file: process.execPath, args: [] };
  return { file: process.execPath, args: [...process.execArgv, resolve(script)] };
}
