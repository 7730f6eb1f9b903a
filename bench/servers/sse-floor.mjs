// Row 4's floor for listens: a bare node:http server that answers every POST
// with an SSE stream carrying one acknowledgement and then only heartbeats,
// the least any Node server must hold per open listen. `node sse-floor.mjs`
import http from 'node:http';

const ACK = 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{}}}\n\n';
const HEARTBEAT_MS = 15_000;

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
    res.write(ACK);
    const timer = setInterval(() => res.write(': keepalive\n\n'), HEARTBEAT_MS);
    res.on('close', () => clearInterval(timer));
  });
});
server.listen(0, '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
