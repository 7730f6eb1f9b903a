// Row 6's upstream: the floor for modern-to-legacy. A bare node:http
// initialize-era (2025-06-18) Streamable HTTP server with sessions that
// answers initialize, tools/list and the echo tool with JSON and nothing else
// (no GET stream: 405, which the spec allows), so what it costs is what any
// Node HTTP hop costs, as floor-echo.mjs is for 2026. `node floor-legacy-echo.mjs`
import { randomUUID } from 'node:crypto';
import http from 'node:http';

const VERSION = '2025-06-18';
const ECHO_TOOL = { name: 'echo', description: 'Echoes a message', inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } };
const sessions = new Set();

/** Results keyed by method; anything else is -32601. */
const METHODS = {
  initialize: () => ({ protocolVersion: VERSION, capabilities: { tools: {} }, serverInfo: { name: 'bench-floor-legacy-echo', version: '1.0.0' } }),
  ping: () => ({}),
  'tools/list': () => ({ tools: [ECHO_TOOL] }),
  'tools/call': (params) => ({ content: [{ type: 'text', text: `Echo: ${params?.arguments?.message ?? ''}` }] }),
};

function reply(res, status, message, headers = {}) {
  const body = JSON.stringify(message);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const sid = req.headers['mcp-session-id'];
  if (req.method === 'DELETE') {
    sessions.delete(sid);
    return void res.writeHead(200).end();
  }
  if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST, DELETE' }).end();
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let msg;
    try {
      msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return reply(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    if (msg.method === 'initialize') {
      const id = randomUUID();
      sessions.add(id);
      return reply(res, 200, { jsonrpc: '2.0', id: msg.id, result: METHODS.initialize() }, { 'mcp-session-id': id });
    }
    if (!sessions.has(sid)) return reply(res, 404, { jsonrpc: '2.0', id: msg.id ?? null, error: { code: -32001, message: 'Session not found' } });
    if (msg.id === undefined) return void res.writeHead(202).end();
    const method = METHODS[msg.method];
    if (!method) return reply(res, 200, { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `Method not found: ${msg.method}` } });
    reply(res, 200, { jsonrpc: '2.0', id: msg.id, result: method(msg.params) });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
