// Rows 1 and 5, context: the least a Node relay does. It forwards each POST's
// bytes and the 2026 headers to the upstream over one node:http keep-alive
// agent and sends the answer back, parsing both bodies once as any MCP relay
// must (to route and to check them) and nothing else: no validation, no
// cancel, no SSE. What it costs on this box bounds what mcp-bridge can reach.
//   node bare-relay.mjs <upstream URL>
import http from 'node:http';

const upstream = new URL(process.argv[2]);
const agent = new http.Agent({ keepAlive: true });
const FORWARDED = ['mcp-protocol-version', 'mcp-method', 'mcp-name'];

function forward(body, req, res) {
  JSON.parse(body.toString('utf8'));
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': body.length };
  for (const name of FORWARDED) if (req.headers[name] !== undefined) headers[name] = req.headers[name];
  const up = http.request({ host: upstream.hostname, port: upstream.port, path: upstream.pathname, method: 'POST', agent, headers }, (answer) => {
    const chunks = [];
    answer.on('data', (c) => chunks.push(c));
    answer.on('end', () => {
      const out = Buffer.concat(chunks);
      JSON.parse(out.toString('utf8'));
      res.writeHead(answer.statusCode, { 'content-type': 'application/json', 'content-length': out.length });
      res.end(out);
    });
  });
  up.on('error', () => res.writeHead(502).end());
  up.end(body);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => forward(Buffer.concat(chunks), req, res));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
