import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { LegacyHandler, ModernHandler } from '../contracts/downstream.js';
import { RpcCode } from '../jsonrpc/codes.js';
import type { Logger } from '../log.js';
import { classifyPost } from './classify-post.js';
import { readJsonBody } from './http-body.js';
import { ModernPost, flatHeaders, writeJsonError } from './modern-post.js';
import { isOriginAllowed } from './origin.js';
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
}

/** The [SDK] body for GET/DELETE on the MCP endpoint without a session (digest §2.4). */
const METHOD_NOT_ALLOWED = { code: RpcCode.ServerError, message: 'Method not allowed.' };

type Handler = (req: Request, res: Response) => Promise<void> | void;

interface FaceParts {
  modern: ModernPost;
  streamable: StreamableHttpSessions;
  sse: SseSessions;
  ws: WsSessions;
}

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
    const legacyOpts: LegacyFaceOptions = {
      handler: opts.legacy,
      logger,
      heartbeatMs: opts.heartbeatMs,
      sessionIdleMs: opts.sessionIdleMs,
      allowOrigins: opts.allowOrigins,
      inputTimeoutMs: opts.inputTimeoutMs,
    };
    const parts: FaceParts = {
      modern: new ModernPost({ modern: opts.modern, logger, heartbeatMs: opts.heartbeatMs }),
      streamable: new StreamableHttpSessions(legacyOpts),
      sse: new SseSessions(legacyOpts),
      ws: new WsSessions(legacyOpts),
    };
    const server = http.createServer(buildApp(opts, parts, logger));
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

  /** Ends every session and stream, aborts modern requests in flight, and stops listening. Handlers are not closed. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.parts.modern.close();
      await Promise.allSettled([this.parts.streamable.close(), this.parts.sse.close(), this.parts.ws.close()]);
      await new Promise<void>((resolve) => {
        this.server.close(() => resolve());
        this.server.closeAllConnections();
      });
    })();
    return this.closing;
  }
}

function buildApp(opts: HttpFaceOptions, parts: FaceParts, logger: Logger): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  // Every route, before anything else (digest §2.1): a present, foreign Origin is refused.
  app.use((req: Request, res: Response, next: NextFunction) => {
    const origin = req.headers.origin;
    if (isOriginAllowed(origin, opts.allowOrigins)) return next();
    logger.warn('http.origin_refused', { origin, path: req.path });
    writeJsonError(res, 403, null, { code: RpcCode.ServerError, message: `Forbidden: Origin ${origin} is not allowed` });
  });

  app.get('/healthz', (_req, res) => {
    res.status(200).json({ status: 'ok' });
  });

  app.post('/mcp', safe(logger, async (req, res) => {
    const read = await readJsonBody(req, opts.maxBodyBytes);
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
    const read = await readJsonBody(req, opts.maxBodyBytes);
    if (!read.ok) return writeJsonError(res, read.status, null, read.error, read.status === 413 ? { connection: 'close' } : {});
    return parts.sse.handlePost(req, res, read.body);
  }));

  app.use((_req: Request, res: Response) => writeJsonError(res, 404, null, { code: RpcCode.ServerError, message: 'Not Found' }));
  return app;
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
