// Row 5's upstream, the floor: a bare node:http 2026-07-28 server that answers
// `server/discover`, `tools/list` and `tools/call` echo with JSON and nothing
// else, so what it costs is what any Node HTTP hop costs. `node floor-echo.mjs`
import http from 'node:http';

const VERSION = '2026-07-28';
const SERVER_INFO = { 'io.modelcontextprotocol/serverInfo': { name: 'bench-floor-echo', version: '1.0.0' } };
const ECHO_TOOL = { name: 'echo', description: 'Echoes a message', inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } };

/** Results keyed by method (digest §1.3, §1.5); anything else is -32601. */
const METHODS = {
  'server/discover': () => ({ resultType: 'complete', supportedVersions: [VERSION], capabilities: { tools: {} }, ttlMs: 3_600_000, cacheScope: 'public', _meta: SERVER_INFO }),
  'tools/list': () => ({ resultType: 'complete', tools: [ECHO_TOOL], ttlMs: 3_600_000, cacheScope: 'public', _meta: SERVER_INFO }),
  'tools/call': (params) => ({ resultType: 'complete', content: [{ type: 'text', text: `Echo: ${params?.arguments?.message ?? ''}` }], _meta: SERVER_INFO }),
};

function reply(res, status, message) {
  const body = JSON.stringify(message);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST') return reply(res, 405, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed.' } });
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let msg;
    try {
      msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return reply(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    if (msg.id === undefined) return void res.writeHead(202).end();
    const version = msg.params?._meta?.['io.modelcontextprotocol/protocolVersion'];
    if (version !== VERSION) {
      return reply(res, 400, { jsonrpc: '2.0', id: msg.id, error: { code: -32022, message: 'Unsupported protocol version', data: { supported: [VERSION] } } });
    }
    const method = METHODS[msg.method];
    if (!method) return reply(res, 404, { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `Method not found: ${msg.method}` } });
    reply(res, 200, { jsonrpc: '2.0', id: msg.id, result: method(msg.params) });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
