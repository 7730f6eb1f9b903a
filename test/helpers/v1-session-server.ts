import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport, type StreamableHTTPServerTransportOptions } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ServerOptions } from '@modelcontextprotocol/sdk/server/index.js';

/** One session of the server: its transport and the McpServer behind it. */
export interface V1Session {
  transport: StreamableHTTPServerTransport;
  mcp: McpServer;
}

export interface V1SessionServer {
  /** http://127.0.0.1:<port> */
  base: string;
  /** The MCP endpoint, `${base}/mcp`. */
  url: string;
  sessions: Map<string, V1Session>;
  close(): Promise<void>;
}

export interface V1SessionServerOptions {
  name: string;
  serverOptions?: ServerOptions;
  /** Registers the tools of each new session's McpServer. */
  register(mcp: McpServer): void;
  /** Transport options besides the session id generator (an event store, a retry interval). */
  transport?: Omit<StreamableHTTPServerTransportOptions, 'sessionIdGenerator' | 'onsessioninitialized'>;
  /** Sees every request first; returns true when it answered it itself. */
  intercept?(req: IncomingMessage, res: ServerResponse): boolean;
}

/**
 * A stateful SDK v1 Streamable HTTP server on 127.0.0.1:0, one McpServer per
 * session: an unknown session id gets 404 -32001, a request without one that
 * is no POST gets 405, and a POST without one starts a session.
 */
export async function startV1SessionServer(opts: V1SessionServerOptions): Promise<V1SessionServer> {
  const sessions = new Map<string, V1Session>();
  const http: Server = createServer(async (req, res) => {
    if (opts.intercept?.(req, res)) return;
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const entry = sessions.get(sid);
      if (entry) return entry.transport.handleRequest(req, res);
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
    }
    if (req.method !== 'POST') return res.writeHead(405).end();
    const mcp = new McpServer({ name: opts.name, version: '1.0.0' }, opts.serverOptions);
    opts.register(mcp);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      ...opts.transport,
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, { transport, mcp }),
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    base,
    url: `${base}/mcp`,
    sessions,
    close: async () => {
      await Promise.all([...sessions.values()].map((e) => e.mcp.close()));
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
