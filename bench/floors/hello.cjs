'use strict';
// The bench's hello-world floor (bench/lib/floors.mjs compiles it with Bun as the binary is built):
// what `dlock-linux-x64 --version` could cost at best, the runtime's start plus one line to stdout.
console.log('hello');
