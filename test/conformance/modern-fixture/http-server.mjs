// Streamable HTTP serving of the modern fixture: `createMcpHandler` with
// `legacy: 'reject'` (no 2025 serving at all), behind the loopback Host/Origin check.
import http from 'node:http';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { loopbackRequest } from '../shared/loopback.mjs';
import { modernServerFactory } from './create-server.mjs';
import { toWebRequest, writeWebResponse } from '../../helpers/node-web-adapter.mjs';

/** Listens on 127.0.0.1:`port` (0 picks one) and resolves with the MCP endpoint URL. */
export async function startModernHttp(port = 0) {
  let handler;
  const factory = modernServerFactory({ changed: (kind) => (kind === 'tool' ? handler.notify.toolsChanged() : handler.notify.promptsChanged()) });
  handler = createMcpHandler(factory, { legacy: 'reject', keepAliveMs: 0 });
  const server = http.createServer(async (req, res) => {
    try {
      if (!req.url?.startsWith('/mcp')) return void res.writeHead(404).end();
      if (!loopbackRequest(req.headers.host, req.headers.origin)) {
        return void res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Host or Origin is not a loopback name' } }));
      }
      const { request, controller } = await toWebRequest(req, res);
      await writeWebResponse(await handler.fetch(request), res, controller);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
      else res.end();
    }
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    async close() {
      await handler.close().catch(() => {});
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
