// Every Lua script's handle, for what concerns them all: doctor's ACL check asks about the
// commands they declare, and a test holds each declaration to its Lua.

import { acquireScript } from './acquire.js';
import { extendScript } from './extend.js';
import { raiseFenceScript } from './fence.js';
import { forceReleaseScript, inspectScript } from './inspect.js';
import { enterScript, extendHolderScript, leaveScript } from './line.js';
import { releaseScript } from './release.js';
import { retakeScript } from './retake.js';

/** Each script's name, Lua as sent, and the commands it declares. */
export const ALL_SCRIPTS: readonly { name: string; lua: string; commands: readonly string[] }[] = [
  acquireScript,
  extendScript,
  retakeScript,
  raiseFenceScript,
  enterScript,
  extendHolderScript,
  leaveScript,
  releaseScript,
  inspectScript,
  forceReleaseScript,
];

/** The commands the scripts call, upper case, once each, in the order they are first declared. */
export function scriptCommands(): string[] {
  return [...new Set(ALL_SCRIPTS.flatMap((script) => script.commands))];
}
