'use strict';
// The bench's ioredis floor: what `dlock run k -- true` does at the least with the client dlock uses.
//   ioredis <port> <key>
// new Redis (127.0.0.1:port: a URL string would go through url.parse, which warns), SET key val NX PX 30000, spawn `true` and wait for it, DEL key, QUIT. Compiled with
// Bun as the binary is (bench/lib/floors.mjs), and run by node as it is (the npm build's floor).
const { Redis } = require('ioredis');
const { spawn } = require('node:child_process');

const [port, key] = process.argv.slice(2);

function fail(message) {
  process.stderr.write(`ioredis floor: ${message}\n`);
  process.exit(1);
}

(async () => {
  const redis = new Redis({ host: '127.0.0.1', port: Number(port) });
  const set = await redis.set(key, 'val', 'PX', 30000, 'NX');
  if (set !== 'OK') fail(`SET NX replied ${set}`);
  const code = await new Promise((resolve) => spawn('true', { stdio: 'inherit' }).on('exit', resolve));
  if (code !== 0) fail(`true exited ${code}`);
  if ((await redis.del(key)) !== 1) fail('DEL removed nothing');
  await redis.quit();
})().catch((error) => fail(error.message));
