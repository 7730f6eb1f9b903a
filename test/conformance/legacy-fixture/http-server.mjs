// Streamable HTTP serving of the legacy fixture (2025-11-25): one session and
// one McpServer per initialize, POST/GET/DELETE on /mcp, and the Host/Origin
// check dns-rebinding-protection asks of a loopback server.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { loopbackRequest } from '../shared/loopback.mjs';
import { MemoryEventStore } from './event-store.mjs';
import { createLegacyServer } from './create-server.mjs';

function reply(res, status, id, code, message) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }));
}

async function readJson(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** Listens on 127.0.0.1:`port` (0 picks one) and resolves with the MCP endpoint URL. */
export async function startLegacyHttp(port = 0) {
  const sessions = new Map(); // id → transport
  const server = http.createServer(async (req, res) => {
    try {
      if (!req.url?.startsWith('/mcp')) return void res.writeHead(404).end();
      if (!loopbackRequest(req.headers.host, req.headers.origin)) {
        return reply(res, 403, null, -32000, 'Host or Origin is not a loopback name');
      }
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (!transport) {
        if (sid !== undefined) return reply(res, 404, null, -32001, 'Session not found');
        if (req.method !== 'POST' || !isInitializeRequest(body)) return reply(res, 400, null, -32000, 'Bad Request: no session; send initialize first');
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          // Resumable streams (server-sse-polling): events are kept and replayed after Last-Event-ID.
          eventStore: new MemoryEventStore(),
          retryInterval: 200,
          onsessioninitialized: (id) => sessions.set(id, transport),
          onsessionclosed: (id) => sessions.delete(id),
        });
        const opened = transport;
        opened.onclose = () => opened.sessionId && sessions.delete(opened.sessionId);
        await createLegacyServer().connect(opened);
      }
      await transport.handleRequest(req, res, body);
    } catch (err) {
      if (!res.headersSent) reply(res, 400, null, -32700, `Parse error: ${err.message}`);
      else res.end();
    }
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/mcp`;
  return {
    url,
    async close() {
      for (const t of sessions.values()) await t.close().catch(() => {});
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
