// A loopback HTTP server that answers every ping "OK" at once (healthchecks' ping API, as
// test/helpers/ping-server.ts), for the cost of `dlock run --ping` (bench/sections/overhead.mjs).

import { createServer } from 'node:http';

/** Start it; `url` is a check's ping URL, `count()` the requests received, `close()` stops it. */
export async function startPingServer() {
  let requests = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests++;
      response.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/ping/bench`,
    count: () => requests,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}
