// Row 1's upstream: a modern-only (2026-07-28) server on the official SDK v2
// with one `echo` tool, served over node:http on 127.0.0.1:0 (the loopback
// preload reports the port). `node sdk-v2-echo.mjs`
import http from 'node:http';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';

const inputSchema = fromJsonSchema({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });

function factory() {
  const server = new McpServer({ name: 'bench-sdk-v2-echo', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('echo', { description: 'Echoes a message', inputSchema }, async ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] }));
  return server;
}

const handler = createMcpHandler(factory, { legacy: 'reject', keepAliveMs: 0 });

/** Hands one node request to the web-standard handler and streams its Response back. */
async function serve(req, res) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
  const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
  const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body, signal: controller.signal });
  const response = await handler.fetch(request);
  const out = {};
  response.headers.forEach((v, k) => (out[k] = v));
  res.writeHead(response.status, out);
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}

const server = http.createServer((req, res) => {
  serve(req, res).catch((err) => {
    if (!res.headersSent) res.writeHead(500).end(String(err));
    else res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1');
process.on('SIGTERM', () => {
  void handler.close();
  server.close();
  server.closeAllConnections();
});
