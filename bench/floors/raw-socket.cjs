'use strict';
// The bench's raw-socket floor: what `dlock run k -- true` does at the least, with no library at all.
//   raw-socket <port> <key>
// One TCP connection to Redis on 127.0.0.1, SET key val NX PX 30000 in RESP, spawn `true` and wait
// for it, DEL key, exit. Any reply other than the expected one exits 1 (a bench error).
const net = require('node:net');
const { spawn } = require('node:child_process');

const [port, key] = process.argv.slice(2);
const resp = (...words) => `*${words.length}\r\n${words.map((w) => `$${Buffer.byteLength(w)}\r\n${w}\r\n`).join('')}`;
const socket = net.connect(Number(port), '127.0.0.1');
socket.setNoDelay(true);
let replies = '';
let waiting;
socket.on('data', (chunk) => {
  replies += chunk;
  const end = replies.indexOf('\r\n');
  if (end >= 0 && waiting) {
    const line = replies.slice(0, end);
    replies = replies.slice(end + 2);
    const resolve = waiting;
    waiting = undefined;
    resolve(line);
  }
});
socket.on('error', (error) => fail(error.message));
const call = (...words) =>
  new Promise((resolve) => {
    waiting = resolve;
    socket.write(resp(...words));
  });

function fail(message) {
  process.stderr.write(`raw-socket floor: ${message}\n`);
  process.exit(1);
}

(async () => {
  const set = await call('SET', key, 'val', 'NX', 'PX', '30000');
  if (set !== '+OK') fail(`SET NX replied ${set}`);
  const code = await new Promise((resolve) => spawn('true', { stdio: 'inherit' }).on('exit', resolve));
  if (code !== 0) fail(`true exited ${code}`);
  const del = await call('DEL', key);
  if (del !== ':1') fail(`DEL replied ${del}`);
  socket.end();
})();
