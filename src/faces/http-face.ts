import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { LegacyHandler, ModernHandler } from '../contracts/downstream.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { errorResponse } from '../jsonrpc/messages.js';
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
  /** When set, `GET /debug/stats` (behind the same gate as every route) answers this object as JSON (`--debug-stats`). */
  debugStats?: () => Record<string, unknown>;
}

/** Defaults for the optional limits (the daemon passes its own). */
const DEFAULT_MAX_HEADER_BYTES = 16 * 1024;
const DEFAULT_MAX_SESSIONS = 1000;

/** The [SDK] body for GET/DELETE on the MCP endpoint without a session (digest §2.4). */
const METHOD_NOT_ALLOWED = { code: RpcCode.ServerError, message: 'Method not allowed.' };

type Handler = (req: Request, res: Response) => Promise<void> | void;

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
 * to the legacy session classes. Express stays inside this file.
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
      maxMessageBytes: opts.maxBodyBytes,
      maxJsonDepth: opts.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH,
      gate: (req) => gate.check(req.headers),
    };
    const parts: FaceParts = {
      modern: new ModernPost({ modern: opts.modern, logger, heartbeatMs: opts.heartbeatMs }),
      streamable: new StreamableHttpSessions(legacyOpts),
      sse: new SseSessions(legacyOpts),
      ws: new WsSessions(legacyOpts),
      draining: false,
    };
    const maxHeaderBytes = opts.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES;
    const server = http.createServer({ maxHeaderSize: maxHeaderBytes }, buildApp(opts, parts, gate, logger));
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

function buildApp(opts: HttpFaceOptions, parts: FaceParts, gate: RequestGate, logger: Logger): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  // Every route, before anything else: Host (DNS rebinding), Origin (digest §2.1), then the bearer token.
  app.use((req: Request, res: Response, next: NextFunction) => {
    const refused = gate.check(req.headers, { open: req.path === '/healthz' });
    if (!refused) return next();
    logRefusal(logger, refused, req);
    writeJsonError(res, refused.status, null, refused.error, refused.headers);
  });

  // A stopping bridge takes nothing new (SIGTERM, --shutdown-timeout), and says so to health checks too;
  // requests in flight were admitted before.
  app.use((_req: Request, res: Response, next: NextFunction) => {
    if (!parts.draining) return next();
    writeJsonError(res, 503, null, SHUTTING_DOWN, { connection: 'close', 'retry-after': '1' });
  });

  app.get('/healthz', (_req, res) => {
    res.status(200).json({ status: 'ok' });
  });

  const debugStats = opts.debugStats;
  if (debugStats) app.get('/debug/stats', (_req, res) => res.status(200).json(debugStats()));

  app.post('/mcp', safe(logger, async (req, res) => {
    const read = await readJsonBody(req, opts.maxBodyBytes, opts.maxJsonDepth);
    if (!read.ok) return writeJsonError(res, read.status, null, read.error, read.status === 413 ? { connection: 'close' } : {});
    const route = classifyPost(read.body, flatHeaders(req), (id) => parts.streamable.has(id));
    if (route.route === 'reject') return writeJsonError(res, route.status, null, route.error);
    if (route.route === 'modern') return parts.modern.handle(req, res, read.body);
    return parts.streamable.handlePost(req, res, read.body);
  }));

  // GET and DELETE are 2025 session operations; a modern client never sends them (digest §2.4).
  const sessionOnly = (op: Handler): Handler => (req, res) => {
    if (req.headers['mcp-session-id'] === undefined) return writeJsonError(res, 405, null, METHOD_NOT_ALLOWED, { allow: 'POST' });
    return op(req, res);
  };
  app.get('/mcp', safe(logger, sessionOnly((req, res) => parts.streamable.handleGet(req, res))));
  app.delete('/mcp', safe(logger, sessionOnly((req, res) => parts.streamable.handleDelete(req, res))));
  app.all('/mcp', (_req, res) => writeJsonError(res, 405, null, METHOD_NOT_ALLOWED, { allow: 'GET, POST, DELETE' }));

  app.get('/sse', safe(logger, (req, res) => parts.sse.handleGet(req, res)));
  app.post('/messages', safe(logger, async (req, res) => {
    const read = await readJsonBody(req, opts.maxBodyBytes, opts.maxJsonDepth);
    if (!read.ok) return writeJsonError(res, read.status, null, read.error, read.status === 413 ? { connection: 'close' } : {});
    return parts.sse.handlePost(req, res, read.body);
  }));

  app.use((_req: Request, res: Response) => writeJsonError(res, 404, null, { code: RpcCode.ServerError, message: 'Not Found' }));
  return app;
}

function logRefusal(logger: Logger, refused: Refusal, req: Request): void {
  const fields: Record<string, unknown> = { reason: refused.reason, status: refused.status, method: req.method, path: req.path };
  if (refused.reason === 'host') fields.host = req.headers.host;
  if (refused.reason === 'origin') fields.origin = req.headers.origin;
  logger.warn('http.refused', fields);
}

/** Statuses for requests node's parser refuses before express sees them. */
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

/** Route wrapper: an unexpected throw becomes a 500 JSON-RPC error instead of express's HTML page. */
function safe(logger: Logger, handler: Handler): Handler {
  return async (req, res) => {
    try {
      await handler(req, res);
    } catch (err) {
      logger.error('http.route_failed', { method: req.method, path: req.path, err });
      if (!res.headersSent) writeJsonError(res, 500, null, { code: RpcCode.InternalError, message: 'Internal error' });
      else if (!res.writableEnded) res.end();
    }
  };
}
