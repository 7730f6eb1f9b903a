import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer as V1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpServer as V2McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toWebRequest, writeWebResponse } from './node-web-adapter.mjs';

/**
 * Real SDK servers (v1 McpServer with sessions, v2 McpServer behind
 * createMcpHandler) on 127.0.0.1:0 that note the JSON-RPC method of every
 * message posted to them, so a test can tell that a request never reached
 * the upstream.
 */
export interface RecordingServer {
  /** The MCP endpoint. */
  url: string;
  /** Methods of the JSON-RPC requests and notifications received, in order. */
  methods: string[];
  close(): Promise<void>;
}

function note(methods: string[], body: unknown): void {
  for (const m of Array.isArray(body) ? body : [body]) {
    if (m && typeof m === 'object' && typeof (m as { method?: unknown }).method === 'string') methods.push((m as { method: string }).method);
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

async function listen(server: Server, methods: string[], extraClose: () => Promise<void>): Promise<RecordingServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    methods,
    close: async () => {
      await extraClose();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** SDK v1 (`@modelcontextprotocol/sdk`) Streamable HTTP server, one McpServer per session. */
export async function startRecordingV1Server(register: (mcp: V1McpServer) => void): Promise<RecordingServer> {
  const methods: string[] = [];
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; mcp: V1McpServer }>();
  const server = createServer(async (req, res) => {
    const body = req.method === 'POST' ? parse(await readBody(req)) : undefined;
    note(methods, body);
    const sid = req.headers['mcp-session-id'];
    const known = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (known) return known.transport.handleRequest(req, res, body);
    if (typeof sid === 'string') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
    }
    if (req.method !== 'POST') return res.writeHead(405).end();
    const mcp = new V1McpServer({ name: 'recording-v1', version: '1.0.0' });
    register(mcp);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, { transport, mcp }),
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  return listen(server, methods, async () => {
    await Promise.all([...sessions.values()].map((s) => s.mcp.close()));
    sessions.clear();
  });
}

/** SDK v2 (`@modelcontextprotocol/server`) modern-only server. */
export async function startRecordingV2Server(register: (mcp: V2McpServer) => void): Promise<RecordingServer> {
  const methods: string[] = [];
  const handler = createMcpHandler(
    () => {
      const mcp = new V2McpServer({ name: 'recording-v2', version: '1.0.0' }, { capabilities: { tools: {}, resources: {}, prompts: {} } });
      register(mcp);
      return mcp;
    },
    { legacy: 'reject', keepAliveMs: 0 },
  );
  const server = createServer(async (req, res) => {
    try {
      const { request, controller } = await toWebRequest(req, res, 'http://127.0.0.1');
      note(methods, parse(await request.clone().text()));
      await writeWebResponse(await handler.fetch(request), res, controller);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
      else res.end();
    }
  });
  return listen(server, methods, async () => {});
}
