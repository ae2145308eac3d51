// The bundle's entry: `dlock heartbeat` is answered here, before the rest of dlock (commander,
// ioredis) is loaded, so that a job can heartbeat often (docs/performance.md); everything else is main.ts.

import { heartbeatFastPath } from './bounds/beat.js';

const code = heartbeatFastPath(process.argv.slice(2), process.env);
if (code === undefined) void import('./main.js');
else process.exitCode = code;
