import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CreateMessageRequest, ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { createLogger, type Logger } from '../../src/log.js';

/**
 * Upstream servers of the conformance-fixes files: an SDK v1 (legacy)
 * Streamable HTTP server that can behave like the conformance suite's lenient
 * servers (a 200 `result: {}` to server/discover, stateless with a refused GET),
 * and a raw 2026-07-28 server whose tools/list carries invalid `x-mcp-header`
 * annotations, as the suite's `http-invalid-tool-headers` scenario does.
 */

export type Obj = Record<string, unknown>;

export interface LegacyServerOptions {
  /** `lenient`: server/discover is answered 200 `{result: {}}`, no session (the suite's 2025 servers). */
  discover?: 'sdk' | 'lenient';
  /** Stateless (no Mcp-Session-Id, a fresh SDK server per POST) with this answer to GET. */
  stateless?: { getStatus: 404 | 405 };
  /** Registers the server's tools and handlers. */
  define(mcp: McpServer): void;
}

export interface RunningTestServer {
  url: string;
  /** Every JSON-RPC message POSTed to the server, in arrival order. */
  received: Obj[];
  /** Methods (GET, DELETE…) of the non-POST requests. */
  others: string[];
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

async function shut(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** An SDK v1 McpServer over Streamable HTTP on 127.0.0.1:0, recording what it receives. */
export async function startLegacyServer(opts: LegacyServerOptions): Promise<RunningTestServer> {
  const received: Obj[] = [];
  const others: string[] = [];
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; mcp: McpServer }>();
  const fresh = () => {
    const mcp = new McpServer({ name: 'conformance-fixes-legacy', version: '1.0.0' });
    opts.define(mcp);
    return mcp;
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') {
      others.push(req.method ?? '?');
      const sid = req.headers['mcp-session-id'];
      const entry = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (entry) return entry.transport.handleRequest(req, res);
      return res.writeHead(opts.stateless?.getStatus ?? 405).end();
    }
    const body = await readJson(req);
    received.push(...([body].flat() as Obj[]));
    const message = body as Obj;
    if (opts.discover === 'lenient' && message.method === 'server/discover') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} }));
    }
    if (opts.stateless) {
      const mcp = fresh();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void mcp.close());
      await mcp.connect(transport);
      return transport.handleRequest(req, res, body);
    }
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const entry = sessions.get(sid);
      if (entry) return entry.transport.handleRequest(req, res, body);
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
    }
    const mcp = fresh();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, { transport, mcp }),
    });
    await mcp.connect(transport);
    return transport.handleRequest(req, res, body);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  const url = await listen(server);
  return {
    url,
    received,
    others,
    close: async () => {
      await Promise.all([...sessions.values()].map((e) => e.mcp.close()));
      sessions.clear();
      await shut(server);
    },
  };
}

const SERVER_INFO = { name: 'conformance-fixes-modern', version: '1.0.0' };

/** The valid tool and the invalid ones of the suite's `http-invalid-tool-headers` scenario (digest §2.5), with the check each breaks. */
export const HEADER_TOOLS = [
  { name: 'valid_tool', inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } } },
  { name: 'invalid_empty_header', inputSchema: { type: 'object', properties: { value: { type: 'string', 'x-mcp-header': '' } } } },
  { name: 'invalid_number_header', inputSchema: { type: 'object', properties: { score: { type: 'number', 'x-mcp-header': 'Score' } } } },
  { name: 'invalid_duplicate_diff_case', inputSchema: { type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'Dup' }, b: { type: 'string', 'x-mcp-header': 'dup' } } } },
  { name: 'invalid_space_in_name', inputSchema: { type: 'object', properties: { v: { type: 'string', 'x-mcp-header': 'Has Space' } } } },
];

/**
 * A raw 2026-07-28 server (stateless, JSON replies): discover, tools/list with
 * HEADER_TOOLS, tools/call echoing the tool name; -32601 + 404 for the rest.
 */
export async function startHeaderToolsServer(): Promise<RunningTestServer> {
  const received: Obj[] = [];
  const others: string[] = [];
  const reply = (res: ServerResponse, status: number, body: Obj) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const results: Record<string, (params: Obj) => Obj> = {
    'server/discover': () => ({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: {} },
      ttlMs: 0,
      cacheScope: 'private',
      _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
    }),
    'tools/list': () => ({ resultType: 'complete', ttlMs: 0, cacheScope: 'private', tools: HEADER_TOOLS }),
    'tools/call': (params) => ({ resultType: 'complete', content: [{ type: 'text', text: `called ${String(params.name)}` }] }),
  };
  const server = createServer((req, res) => {
    if (req.method !== 'POST') {
      others.push(req.method ?? '?');
      return void res.writeHead(405).end();
    }
    void readJson(req).then((body) => {
      const m = body as Obj;
      received.push(m);
      if (m.id === undefined) return void res.writeHead(202).end();
      const make = results[m.method as string];
      if (!make) return reply(res, 404, { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${String(m.method)}` } });
      reply(res, 200, { jsonrpc: '2.0', id: m.id, result: make((m.params ?? {}) as Obj) });
    });
  });
  const url = await listen(server);
  return { url, received, others, close: () => shut(server) };
}

/** A logger that keeps every record it would write (at `level` and above). */
export function recordingLogger(level: 'debug' | 'info' | 'warn' = 'info'): { logger: Logger; records: Obj[] } {
  const records: Obj[] = [];
  return { logger: createLogger(level, {}, (line) => void records.push(JSON.parse(line) as Obj)), records };
}

/** A CreateMessage request a legacy tool sends (sampling, digest §1.7 table). */
export const SAMPLING: CreateMessageRequest = { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 } };

/** A form elicitation a legacy tool sends. */
export const ELICIT_NAME: ElicitRequest = {
  method: 'elicitation/create',
  params: { message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
};
