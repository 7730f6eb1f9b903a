import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { LegacyHandler, ModernHandler } from '../contracts/downstream.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import { errorResponse } from '../jsonrpc/messages.js';
import type { ClusterRouter } from '../cluster/cluster-router.js';
import type { Logger } from '../log.js';
import type { BridgeMetrics } from '../ops/bridge-metrics.js';
import { addCorsHeaders, answerPreflight, isPreflight } from '../ops/cors.js';
import type { ReadinessCheck } from '../ops/readiness.js';
import { FaceUnit, type FaceUnitHandlers, type FaceUnitShared, type Handler } from './face-unit.js';
import { writeJsonError } from './modern-post.js';
import { requestPath } from './request-path.js';
import { isOriginAllowed } from './origin.js';
import { DEFAULT_MAX_JSON_DEPTH } from './inbound-json.js';
import type { ClientAuth } from './auth-verdict.js';
import { RequestGate, type Refusal } from './request-gate.js';
import { isResourceMetadataPath, serveResourceMetadata } from './auth-metadata-route.js';
import { ServerRoutes } from './server-routes.js';
import { SessionBudget } from './session-budget.js';

export interface HttpFaceOptions {
  /** The one upstream's handlers; leave out with `servers` (units added through `HttpFace.unit`). */
  modern?: ModernHandler;
  legacy?: LegacyHandler;
  /** The routing table of a many-server daemon (`/servers/<name>/…`); without it, one unit at the root. */
  servers?: ServerRoutes;
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
  /** Client authentication (`--auth jwt | pass-through | token`); wins over `authToken`. */
  auth?: ClientAuth;
  /** node's `maxHeaderSize`: larger request headers get 431. */
  maxHeaderBytes?: number;
  /** Deeper JSON bodies and WebSocket frames get 400 -32600 before parsing. */
  maxJsonDepth?: number;
  /** Downstream legacy sessions at most, all transports together; one more initialize gets 503. */
  maxSessions?: number;
  /** One principal's share of `maxSessions` (`--max-sessions-per-principal`). */
  maxSessionsPerPrincipal?: number;
  /** SSE events kept per Streamable HTTP session for Last-Event-ID (default 1000; 0: none). */
  eventStoreMax?: number;
  /** When set, `GET /debug/stats` (behind the same gate as every route) answers this object as JSON (`--debug-stats`). */
  debugStats?: () => Record<string, unknown>;
  /** Operations: metrics, readiness and CORS (src/ops/); each part is off when absent. */
  ops?: HttpFaceOps;
  /** Cluster mode (issue 16): requests for state another replica holds are forwarded to it. */
  cluster?: ClusterRouter;
}

/** What the HTTP face serves for operators and browsers. */
export interface HttpFaceOps {
  /** Counts refusals; with `metricsRoute`, `GET /metrics` (same gate as /mcp) serves it. */
  metrics?: BridgeMetrics;
  /** False when the metrics are served on their own listener (`--metrics-listen`). */
  metricsRoute?: boolean;
  /** `GET /readyz` (open, like /healthz): 200, or 503 with the reason. */
  readiness?: ReadinessCheck;
  /** CORS on (`--cors-origin`): allowed origins (the Origin check's) get preflights answered and CORS headers. */
  cors?: boolean;
}

/** Defaults for the optional limits (the daemon passes its own). */
const DEFAULT_MAX_HEADER_BYTES = 16 * 1024;
const DEFAULT_MAX_SESSIONS = 1000;
/** How long an idle client connection is kept open (node's default is 5 s). */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

interface FaceParts {
  /** The MCP routes: one unit per upstream (face-unit.ts), found by path (server-routes.ts). */
  servers: ServerRoutes;
  /** What every unit of this face shares (gate, session budget, limits). */
  shared: FaceUnitShared;
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
    const gate = new RequestGate({ allowOrigins: opts.allowOrigins, allowHosts: opts.allowHosts ?? [], listenHost: opts.listen.host, authToken: opts.authToken, auth: opts.auth });
    const parts = faceParts(opts, gate, logger);
    const metrics = opts.ops?.metrics;
    const maxHeaderBytes = opts.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES;
    // An idle keep-alive connection is closed by the client first: node's 5 s default races a client that
    // sends on a socket the server is closing (the request fails with a reset; seen under load). Load
    // balancers use the same rule (upstream idle timeout longer than the balancer's).
    const server = http.createServer({ maxHeaderSize: maxHeaderBytes, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, headersTimeout: KEEP_ALIVE_TIMEOUT_MS + 1_000 }, buildListener(opts, parts, gate, logger));
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
      if (err.code === 'HPE_HEADER_OVERFLOW') metrics?.refused('limits');
      answerClientError(err, socket, maxHeaderBytes, logger);
    });
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => parts.servers.upgrade(req, socket, head));
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
   * The face without a server of its own, for an app that already has one
   * (`createBridgeHandler`, `mcp-bridge/express`): the same gate, routes and
   * units, run on the app's requests and upgrades. `listen.host` only names the
   * Host the gate accepts besides loopback names and IP literals.
   */
  static embedded(opts: Omit<HttpFaceOptions, 'listen'> & { listen?: { host: string } }): EmbeddedFace {
    const logger = opts.logger.child({ face: 'http' });
    const host = opts.listen?.host ?? '127.0.0.1';
    const gate = new RequestGate({ allowOrigins: opts.allowOrigins, allowHosts: opts.allowHosts ?? [], listenHost: host, authToken: opts.authToken, auth: opts.auth });
    const parts = faceParts({ ...opts, listen: { host, port: 0 } }, gate, logger);
    return {
      listener: buildListener({ ...opts, listen: { host, port: 0 } }, parts, gate, logger),
      upgrade: (req, socket, head) => parts.servers.upgrade(req, socket, head),
      unit: (handlers) => new FaceUnit(parts.shared, handlers),
      drain: () => void (parts.draining = true),
      close: async () => void (await Promise.allSettled(parts.servers.faces().map((f) => f.close()))),
    };
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

  /** A face unit for one upstream's handlers, sharing this face's gate, session budget and limits (put it in `servers`). */
  unit(handlers: FaceUnitHandlers): FaceUnit {
    return new FaceUnit(this.parts.shared, handlers);
  }

  /** Open downstream sessions per transport and modern requests being answered, every unit together. */
  stats(): { streamableHttpSessions: number; sseSessions: number; wsSessions: number; modernRequests: number } {
    const total = { streamableHttpSessions: 0, sseSessions: 0, wsSessions: 0, modernRequests: 0 };
    for (const face of this.parts.servers.faces()) {
      const s = face.stats();
      for (const k of Object.keys(total) as Array<keyof typeof total>) total[k] += s[k];
    }
    return total;
  }

  /** Ends every session and stream, aborts modern requests in flight, and stops listening. Handlers are not closed. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled(this.parts.servers.faces().map((f) => f.close()));
      await new Promise<void>((resolve) => {
        if (!this.server.listening) resolve();
        else this.server.close(() => resolve());
        this.server.closeAllConnections();
      });
    })();
    return this.closing;
  }
}

/** HttpFace.embedded: a request listener and an upgrade handler for the app's own node:http server. */
export interface EmbeddedFace {
  listener: http.RequestListener;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  unit(handlers: FaceUnitHandlers): FaceUnit;
  /** New requests get 503 from now on. */
  drain(): void;
  close(): Promise<void>;
}

/** The shared unit options and the routing table; a single upstream gets one unit at the root. */
function faceParts(opts: HttpFaceOptions, gate: RequestGate, logger: Logger): FaceParts {
  const metrics = opts.ops?.metrics;
  const shared: FaceUnitShared = {
    logger,
    allowOrigins: opts.allowOrigins,
    maxBodyBytes: opts.maxBodyBytes,
    maxJsonDepth: opts.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH,
    heartbeatMs: opts.heartbeatMs,
    sessionIdleMs: opts.sessionIdleMs,
    inputTimeoutMs: opts.inputTimeoutMs,
    eventStoreMax: opts.eventStoreMax,
    sessions: new SessionBudget(opts.maxSessions ?? DEFAULT_MAX_SESSIONS, opts.maxSessionsPerPrincipal, metrics && (() => metrics.refused('limits'))),
    gate: (req) => counted(metrics, gate.check(req)),
    metrics,
    cluster: opts.cluster,
  };
  let servers = opts.servers;
  if (!servers) {
    if (!opts.modern || !opts.legacy) throw new Error('HttpFace needs modern and legacy handlers, or servers');
    servers = new ServerRoutes({ named: false });
    servers.set('default', { face: new FaceUnit(shared, { modern: opts.modern, legacy: opts.legacy }), state: 'ready' });
  }
  return { servers, shared, draining: false };
}

/** At the face's own level no session is local: the units route their own paths (face-unit.ts). */
const NO_LOCAL_SESSIONS = { streamable: () => true, sse: () => true };

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
  const metrics = opts.ops?.metrics;
  const cors = opts.ops?.cors === true;
  const cluster = opts.cluster;
  return (req, res) => {
    // The cluster's internal route: proof checked and the original URL restored before anything else.
    const unwrapped = cluster?.unwrap(req, res);
    if (unwrapped === 'answered') return;
    if (unwrapped === 'refused') return writeJsonError(res, 404, null, NOT_FOUND);
    const path = routePath(req.url);
    // CORS (--cors-origin): an origin the Origin check allows gets its headers on every answer, refusals
    // included (a page must read a 401's WWW-Authenticate); a preflight carries no credentials, so it is
    // answered after Host and Origin but before the credentials. A refused origin falls through to the 403 below.
    const origin = req.headers.origin;
    if (cors && origin !== undefined && isOriginAllowed(origin, opts.allowOrigins) && isPreflight(req)) {
      const refused = gate.check(req, { open: true });
      if (refused instanceof Promise) {
        refused.then((r) => (r ? admitted(r, path, false, req, res) : answerPreflight(req, res, origin)), (err: unknown) => admitted(INTERNAL_REFUSAL, path, false, req, res, err));
        return;
      }
      if (!refused) return answerPreflight(req, res, origin);
    } else if (cors && origin !== undefined && isOriginAllowed(origin, opts.allowOrigins)) addCorsHeaders(res, origin);
    // Every route, before anything else: Host (DNS rebinding), Origin (digest §2.1), then the credentials.
    // The resource metadata is open: it is how an OAuth client learns where to get a token (RFC 9728).
    const metadata = isResourceMetadataPath(path);
    const refused = gate.check(req, { open: path === '/healthz' || path === '/readyz' || metadata });
    if (refused instanceof Promise) {
      refused.then((r) => admitted(r, path, metadata, req, res), (err: unknown) => admitted(INTERNAL_REFUSAL, path, metadata, req, res, err));
      return;
    }
    admitted(refused, path, metadata, req, res);
  };

  function admitted(refused: Refusal | undefined, path: string, metadata: boolean, req: IncomingMessage, res: ServerResponse, err?: unknown): void {
    if (refused) {
      metrics?.refused(refused.reason);
      logRefusal(logger, refused, req, path, err);
      return writeJsonError(res, refused.status, null, refused.error, refused.headers);
    }
    if (metadata) return void serveResourceMetadata(gate.auth, req, res, path, logger);
    // A stopping bridge takes nothing new (SIGTERM, --shutdown-timeout), and says so to health checks too
    // (/readyz with its reason); requests in flight were admitted before.
    if (parts.draining && path !== '/readyz') return writeJsonError(res, 503, null, SHUTTING_DOWN, { connection: 'close', 'retry-after': '1' });
    // A cluster replica that is handing off answers /healthz 503 itself (the units forward session traffic).
    if (cluster?.route(req, res, path, NO_LOCAL_SESSIONS)) return;
    const byMethod = routes[path];
    const handler = byMethod?.[req.method === 'HEAD' ? 'GET' : (req.method ?? '')] ?? byMethod?.['*'] ?? parts.servers.handlerFor(req);
    if (!handler) return writeJsonError(res, 404, null, NOT_FOUND);
    run(logger, handler, req, res, path);
  }
}

/** The face's own routes; the MCP routes come from `parts.servers` (server-routes.ts). */
function buildRoutes(opts: HttpFaceOptions, parts: FaceParts): RouteTable {
  const routes: RouteTable = {
    '/healthz': { GET: (_req, res) => writeJson(res, { status: 'ok' }) },
  };
  const debugStats = opts.debugStats;
  if (debugStats) routes['/debug/stats'] = { GET: (_req, res) => writeJson(res, debugStats()) };
  addOpsRoutes(routes, opts.ops, () => parts.draining);
  return routes;
}

/** `/readyz` (open) and, unless it has a listener of its own, `/metrics` (behind the gate). */
function addOpsRoutes(routes: RouteTable, ops: HttpFaceOps | undefined, draining: () => boolean): void {
  const readiness = ops?.readiness;
  routes['/readyz'] = {
    GET: async (_req, res) => {
      const state = draining() ? ({ ready: false, reason: 'draining', detail: 'mcp-bridge is shutting down' } as const) : ((await readiness?.check()) ?? ({ ready: true } as const));
      if (state.ready) return writeJson(res, { status: 'ready' });
      writeJson(res, { status: 'not ready', reason: state.reason, detail: state.detail }, 503);
    },
  };
  const metrics = ops?.metrics;
  if (metrics && ops?.metricsRoute !== false) {
    routes['/metrics'] = {
      GET: async (_req, res) => {
        const { contentType, body } = await metrics.render();
        res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
        res.end(body);
      },
    };
  }
}

/** The gate's verdict, counted when it refuses (now or once a token check settles). */
function counted(metrics: BridgeMetrics | undefined, refused: Refusal | undefined | Promise<Refusal | undefined>): Refusal | undefined | Promise<Refusal | undefined> {
  if (!metrics) return refused;
  if (refused instanceof Promise) return refused.then((r) => counted(metrics, r) as Refusal | undefined);
  if (refused) metrics.refused(refused.reason);
  return refused;
}

/** What a client gets when checking its credentials failed inside the bridge. */
const INTERNAL_REFUSAL: Refusal = { reason: 'auth', status: 500, error: { code: RpcCode.InternalError, message: 'Internal error' }, headers: {} };

/** The path a route is looked up by: no query, lower case, one trailing slash dropped. */
function routePath(url: string | undefined): string {
  let path = requestPath(url);
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return path.toLowerCase();
}

function writeJson(res: ServerResponse, value: unknown, status = 200): void {
  const body = stringifyJsonRpc(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function logRefusal(logger: Logger, refused: Refusal, req: IncomingMessage, path: string, err?: unknown): void {
  const fields: Record<string, unknown> = { reason: refused.reason, status: refused.status, method: req.method, path };
  if (refused.reason === 'auth') fields.why = refused.error.message;
  if (err !== undefined) fields.err = err;
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
