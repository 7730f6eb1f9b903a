import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { LegacyHandler, ModernHandler } from '../contracts/downstream.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { errorResponse } from '../jsonrpc/messages.js';
import type { ClusterRouter } from '../cluster/cluster-router.js';
import type { Logger } from '../log.js';
import { classifyPost } from './classify-post.js';
import { readJsonBody } from './http-body.js';
import { ModernPost, flatHeaders, writeJsonError } from './modern-post.js';
import { DEFAULT_MAX_JSON_DEPTH } from './inbound-json.js';
import { RequestGate, type Refusal } from './request-gate.js';
import { SessionBudget } from './session-budget.js';
import { SseSessions } from './sse-sessions.js';
import { StreamableHttpSessions, type LegacyFaceOptions } from './streamable-http-sessions.js';
import { WsSessions } from './ws-sessions.js';

export interface HttpFaceOptions {
  modern: ModernHandler;
  legacy: LegacyHandler;
  logger: Logger;
  listen: { host: string; port: number };
  allowOrigins: string[];
  maxBodyBytes: number;
  heartbeatMs: number;
  sessionIdleMs: number;
  inputTimeoutMs?: number;
  /** `Host` names served besides loopback names, IP literals and the listen host (`*`: any). */
  allowHosts?: string[];
  /** When set, every route but /healthz needs `Authorization: Bearer <token>`. */
  authToken?: string;
  /** node's `maxHeaderSize`: larger request headers get 431. */
  maxHeaderBytes?: number;
  /** Deeper JSON bodies and WebSocket frames get 400 -32600 before parsing. */
  maxJsonDepth?: number;
  /** Downstream legacy sessions at most, all transports together; one more initialize gets 503. */
  maxSessions?: number;
  /** SSE events kept per Streamable HTTP session for Last-Event-ID (default 1000; 0: none). */
  eventStoreMax?: number;
  /** When set, `GET /debug/stats` (behind the same gate as every route) answers this object as JSON (`--debug-stats`). */
  debugStats?: () => Record<string, unknown>;
  /** Cluster mode (issue 16): requests for state another replica holds are forwarded to it. */
  cluster?: ClusterRouter;
}

/** Defaults for the optional limits (the daemon passes its own). */
const DEFAULT_MAX_HEADER_BYTES = 16 * 1024;
const DEFAULT_MAX_SESSIONS = 1000;

/** The [SDK] body for GET/DELETE on the MCP endpoint without a session (digest §2.4). */
const METHOD_NOT_ALLOWED = { code: RpcCode.ServerError, message: 'Method not allowed.' };

interface FaceParts {
  modern: ModernPost;
  streamable: StreamableHttpSessions;
  sse: SseSessions;
  ws: WsSessions;
  /** Set by drain(): every new request is refused with 503 and `Connection: close`. */
  draining: boolean;
}

/** What a stopping bridge answers a request that arrives after it stopped accepting. */
const SHUTTING_DOWN = { code: RpcCode.ServerError, message: 'Service Unavailable: mcp-bridge is shutting down' };

/**
 * The HTTP face: one port serving every epoch. POST /mcp is classified per
 * message (digest §2.8) and goes to the modern ladder or to a 2025 session;
 * GET/DELETE /mcp with a session, GET /sse + POST /messages (2024) and /ws go
 * to the legacy session classes, through a route table on node:http.
 */
export class HttpFace {
  readonly url: string;
  readonly port: number;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly server: http.Server,
    private readonly parts: FaceParts,
    host: string,
  ) {
    this.port = (server.address() as AddressInfo).port;
    this.url = `http://${host.includes(':') ? `[${host}]` : host}:${this.port}`;
  }

  /** Builds the app, binds `listen.host:listen.port` (0 picks a port) and resolves once listening. */
  static async start(opts: HttpFaceOptions): Promise<HttpFace> {
    const logger = opts.logger.child({ face: 'http' });
    const gate = new RequestGate({ allowOrigins: opts.allowOrigins, allowHosts: opts.allowHosts ?? [], listenHost: opts.listen.host, authToken: opts.authToken });
    const legacyOpts: LegacyFaceOptions = {
      handler: opts.legacy,
      logger,
      heartbeatMs: opts.heartbeatMs,
      sessionIdleMs: opts.sessionIdleMs,
      allowOrigins: opts.allowOrigins,
      inputTimeoutMs: opts.inputTimeoutMs,
      sessions: new SessionBudget(opts.maxSessions ?? DEFAULT_MAX_SESSIONS),
      eventStoreMax: opts.eventStoreMax,
      maxMessageBytes: opts.maxBodyBytes,
      maxJsonDepth: opts.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH,
      gate: (req) => gate.check(req.headers),
      mintSessionId: opts.cluster ? () => opts.cluster!.mintSessionId() : undefined,
    };
    const parts: FaceParts = {
      modern: new ModernPost({ modern: opts.modern, logger, heartbeatMs: opts.heartbeatMs }),
      streamable: new StreamableHttpSessions(legacyOpts),
      sse: new SseSessions(legacyOpts),
      ws: new WsSessions(legacyOpts),
      draining: false,
    };
    const maxHeaderBytes = opts.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES;
    const server = http.createServer({ maxHeaderSize: maxHeaderBytes }, buildListener(opts, parts, gate, logger));
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket, maxHeaderBytes, logger));
    parts.ws.attach(server, '/ws');
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.listen.port, opts.listen.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new HttpFace(server, parts, opts.listen.host);
  }

  /**
   * Stops accepting: the listening socket closes (idle keep-alive connections
   * with it) and any request that still arrives gets 503. Requests and streams
   * already open go on until close().
   */
  drain(): void {
    if (this.parts.draining) return;
    this.parts.draining = true;
    this.server.close();
    this.server.closeIdleConnections();
  }

  /** Open downstream sessions per transport and modern requests being answered. */
  stats(): { streamableHttpSessions: number; sseSessions: number; wsSessions: number; modernRequests: number } {
    const p = this.parts;
    return { streamableHttpSessions: p.streamable.size, sseSessions: p.sse.size, wsSessions: p.ws.size, modernRequests: p.modern.size };
  }

  /** Ends every session and stream, aborts modern requests in flight, and stops listening. Handlers are not closed. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.parts.modern.close();
      await Promise.allSettled([this.parts.streamable.close(), this.parts.sse.close(), this.parts.ws.close()]);
      await new Promise<void>((resolve) => {
        if (!this.server.listening) resolve();
        else this.server.close(() => resolve());
        this.server.closeAllConnections();
      });
    })();
    return this.closing;
  }
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

/** Routes keyed by path, then by method; HEAD is served by the GET handler (as express did). */
type RouteTable = Record<string, Partial<Record<string, Handler>>>;

const NOT_FOUND = { code: RpcCode.ServerError, message: 'Not Found' };

/**
 * The request listener: a table of routes on node:http, no framework. Express
 * used to sit here and cost ~120 µs per POST /mcp (issue 7); the behaviour it
 * gave is kept: paths match case-insensitively with an optional trailing slash,
 * the query string is ignored, and everything unknown is a JSON-RPC 404.
 */
function buildListener(opts: HttpFaceOptions, parts: FaceParts, gate: RequestGate, logger: Logger): http.RequestListener {
  const routes = buildRoutes(opts, parts);
  const cluster = opts.cluster;
  const local = { streamable: (id: string) => parts.streamable.has(id), sse: (id: string) => parts.sse.has(id) };
  return (req, res) => {
    // The cluster's internal route: proof checked and the original URL restored before anything else.
    const unwrapped = cluster?.unwrap(req, res);
    if (unwrapped === 'answered') return;
    if (unwrapped === 'refused') return writeJsonError(res, 404, null, NOT_FOUND);
    const path = routePath(req.url);
    // Every route, before anything else: Host (DNS rebinding), Origin (digest §2.1), then the bearer token.
    const refused = gate.check(req.headers, { open: path === '/healthz' });
    if (refused) {
      logRefusal(logger, refused, req, path);
      return writeJsonError(res, refused.status, null, refused.error, refused.headers);
    }
    // A stopping bridge takes nothing new (SIGTERM, --shutdown-timeout), and says so to health checks too;
    // requests in flight were admitted before.
    if (parts.draining) return writeJsonError(res, 503, null, SHUTTING_DOWN, { connection: 'close', 'retry-after': '1' });
    if (cluster?.route(req, res, path, local)) return;
    const byMethod = routes[path];
    const handler = byMethod?.[req.method === 'HEAD' ? 'GET' : (req.method ?? '')] ?? byMethod?.['*'];
    if (!handler) return writeJsonError(res, 404, null, NOT_FOUND);
    run(logger, handler, req, res, path);
  };
}

function buildRoutes(opts: HttpFaceOptions, parts: FaceParts): RouteTable {
  const local = { streamable: (id: string) => parts.streamable.has(id), sse: (id: string) => parts.sse.has(id) };
  const mcpPost: Handler = async (req, res) => {
    const read = await readJsonBody(req, opts.maxBodyBytes, opts.maxJsonDepth);
    if (!read.ok) return writeJsonError(res, read.status, null, read.error, read.status === 413 ? { connection: 'close' } : {});
    const headers = flatHeaders(req);
    const route = classifyPost(read.body, headers, (id) => parts.streamable.has(id));
    if (route.route === 'reject') return writeJsonError(res, route.status, null, route.error);
    if (opts.cluster?.routePost(req, res, read.body, route.route, local)) return;
    if (route.route === 'modern') return parts.modern.handle(req, res, read.body, headers);
    return parts.streamable.handlePost(req, res, read.body);
  };
  // GET and DELETE are 2025 session operations; a modern client never sends them (digest §2.4).
  const sessionOnly = (op: Handler): Handler => (req, res) => {
    if (req.headers['mcp-session-id'] === undefined) return writeJsonError(res, 405, null, METHOD_NOT_ALLOWED, { allow: 'POST' });
    return op(req, res);
  };
  const routes: RouteTable = {
    '/healthz': { GET: (_req, res) => writeJson(res, { status: 'ok' }) },
    '/mcp': {
      POST: mcpPost,
      GET: sessionOnly((req, res) => parts.streamable.handleGet(req, res)),
      DELETE: sessionOnly((req, res) => parts.streamable.handleDelete(req, res)),
      '*': (_req, res) => writeJsonError(res, 405, null, METHOD_NOT_ALLOWED, { allow: 'GET, POST, DELETE' }),
    },
    '/sse': { GET: (req, res) => parts.sse.handleGet(req, res) },
    '/messages': {
      POST: async (req, res) => {
        const read = await readJsonBody(req, opts.maxBodyBytes, opts.maxJsonDepth);
        if (!read.ok) return writeJsonError(res, read.status, null, read.error, read.status === 413 ? { connection: 'close' } : {});
        return parts.sse.handlePost(req, res, read.body);
      },
    },
  };
  const debugStats = opts.debugStats;
  if (debugStats) routes['/debug/stats'] = { GET: (_req, res) => writeJson(res, debugStats()) };
  return routes;
}

/** The path a route is looked up by: no query, lower case, one trailing slash dropped. */
function routePath(url: string | undefined): string {
  let path = url ?? '/';
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname; // absolute-form request target
    } catch {
      return '';
    }
  }
  const q = path.indexOf('?');
  if (q >= 0) path = path.slice(0, q);
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return path.toLowerCase();
}

function writeJson(res: ServerResponse, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function logRefusal(logger: Logger, refused: Refusal, req: IncomingMessage, path: string): void {
  const fields: Record<string, unknown> = { reason: refused.reason, status: refused.status, method: req.method, path };
  if (refused.reason === 'host') fields.host = req.headers.host;
  if (refused.reason === 'origin') fields.origin = req.headers.origin;
  logger.warn('http.refused', fields);
}

/** Statuses for requests node's parser refuses before a route sees them. */
const CLIENT_ERROR_STATUS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
};

/**
 * Malformed HTTP (bad header characters, CR/LF inside a value, oversized
 * headers) never reaches a route; answer it with the same JSON-RPC body shape
 * as every other refusal instead of node's bare status line.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex, maxHeaderBytes: number, logger: Logger): void {
  const inProgress = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inProgress?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, text] = CLIENT_ERROR_STATUS[err.code ?? ''] ?? [400, 'Bad Request'];
  const message = status === 431 ? `${text}: request headers exceed ${maxHeaderBytes} bytes (see --max-header-size)` : `${text}: malformed HTTP request (${err.code ?? err.message})`;
  logger.debug('http.client_error', { code: err.code, status });
  const body = JSON.stringify(errorResponse(null, { code: RpcCode.ServerError, message }));
  socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/**
 * Runs a route: an unexpected throw becomes a 500 JSON-RPC error, not a dropped
 * connection. A reaction rather than an async frame: some routes stay open for
 * as long as their client does (a listen), and a suspended frame each costs.
 */
function run(logger: Logger, handler: Handler, req: IncomingMessage, res: ServerResponse, path: string): void {
  const failed = (err: unknown): void => {
    logger.error('http.route_failed', { method: req.method, path, err });
    if (!res.headersSent) writeJsonError(res, 500, null, { code: RpcCode.InternalError, message: 'Internal error' });
    else if (!res.writableEnded) res.end();
  };
  try {
    handler(req, res)?.then(undefined, failed);
  } catch (err) {
    failed(err);
  }
}
