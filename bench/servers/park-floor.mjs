// Row 4's floor for a parked MRTR call: the least a Node relay holds while a
// call waits for its client's input and the upstream's response stream stays
// open for the final result. Each POST opens a POST to the upstream over one
// node:http keep-alive agent, reads its first SSE event, answers the client
// with an `input_required` result, and keeps the upstream exchange open (its
// body read and dropped). No state of its own: no ids, no timers, no
// requestState. `node park-floor.mjs <upstream URL>` (an SSE server such as
// sse-floor.mjs).
import http from 'node:http';

const upstream = new URL(process.argv[2]);
const agent = new http.Agent({ keepAlive: true });
const held = new Set();

function park(body, res) {
  const { id } = JSON.parse(body.toString('utf8'));
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': body.length };
  const up = http.request({ host: upstream.hostname, port: upstream.port, path: upstream.pathname, method: 'POST', agent, headers }, (answer) => {
    held.add(answer);
    answer.once('data', () => {
      const out = JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'input_required', inputRequests: {} } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
      res.end(out);
      answer.on('data', () => undefined);
    });
    answer.once('close', () => held.delete(answer));
  });
  up.on('error', () => res.writeHead(502).end());
  up.end(body);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => park(Buffer.concat(chunks), res));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1');
process.on('SIGTERM', () => {
  for (const answer of held) answer.destroy();
  server.close();
  server.closeAllConnections();
});
