import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { LegacyHandler, ModernHandler } from '../contracts/downstream.js';
import { RpcCode } from '../jsonrpc/codes.js';
import type { Logger } from '../log.js';
import type { ClusterRouter, LocalSessions } from '../cluster/cluster-router.js';
import type { BridgeMetrics } from '../ops/bridge-metrics.js';
import { attachTraceHeaders } from '../ops/tracing.js';
import { classifyPost } from './classify-post.js';
import { readJsonBody } from './http-body.js';
import { ModernPost, flatHeaders, writeJsonError } from './modern-post.js';
import type { GateCheck } from './request-gate.js';
import type { SessionBudget } from './session-budget.js';
import { SseSessions } from './sse-sessions.js';
import { StreamableHttpSessions } from './streamable-http-sessions.js';
import { WsSessions } from './ws-sessions.js';

/** A route handler of the HTTP face. */
export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

/** What every unit of one HTTP face shares: limits, the gate, one session budget. */
export interface FaceUnitShared {
  logger: Logger;
  allowOrigins: string[];
  maxBodyBytes: number;
  maxJsonDepth: number;
  heartbeatMs: number;
  sessionIdleMs: number;
  inputTimeoutMs?: number;
  /** `--event-store-max`: events kept per legacy Streamable HTTP session for resumption. */
  eventStoreMax?: number;
  sessions: SessionBudget;
  gate: GateCheck;
  /** Counts refused requests by reason (issue 13), when metrics are on. */
  metrics?: BridgeMetrics;
  /** A cluster replica (issue 16): session ids name their owner, and state held elsewhere is forwarded to it. */
  cluster?: ClusterRouter;
}

/** The bridge handlers one unit serves. */
export interface FaceUnitHandlers {
  modern: ModernHandler;
  legacy: LegacyHandler;
  /** Added to the unit's log lines (`server: <name>` for a config-file daemon). */
  logFields?: Record<string, unknown>;
}

/** The [SDK] body for GET/DELETE on the MCP endpoint without a session (digest §2.4). */
const METHOD_NOT_ALLOWED = { code: RpcCode.ServerError, message: 'Method not allowed.' };

/**
 * The MCP routes of one upstream on the HTTP face: POST/GET/DELETE `/mcp`,
 * GET `/sse` + POST `/messages`, and the `/ws` upgrade, each relative to the
 * prefix the unit is served under (none for a single upstream, `/servers/<name>`
 * for a config file, the mount path inside an embedding app). Every unit has
 * its own sessions; the face's gate and session budget are shared.
 */
export class FaceUnit {
  private readonly modern: ModernPost;
  private readonly streamable: StreamableHttpSessions;
  private readonly sse: SseSessions;
  private readonly ws: WsSessions;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly shared: FaceUnitShared,
    handlers: FaceUnitHandlers,
  ) {
    const logger = handlers.logFields ? shared.logger.child(handlers.logFields) : shared.logger;
    const legacyOpts = {
      handler: handlers.legacy,
      logger,
      heartbeatMs: shared.heartbeatMs,
      sessionIdleMs: shared.sessionIdleMs,
      allowOrigins: shared.allowOrigins,
      inputTimeoutMs: shared.inputTimeoutMs,
      eventStoreMax: shared.eventStoreMax,
      sessions: shared.sessions,
      maxMessageBytes: shared.maxBodyBytes,
      maxJsonDepth: shared.maxJsonDepth,
      gate: shared.gate,
      mintSessionId: shared.cluster ? () => shared.cluster!.mintSessionId() : undefined,
    };
    const metrics = shared.metrics;
    this.modern = new ModernPost({ modern: handlers.modern, logger, heartbeatMs: shared.heartbeatMs, onReject: metrics && (() => metrics.refused('validation')) });
    this.streamable = new StreamableHttpSessions(legacyOpts);
    this.sse = new SseSessions(legacyOpts);
    this.ws = new WsSessions(legacyOpts);
  }

  /**
   * The handler for `method` on `sub` (`/mcp`, `/sse`, `/messages`, lower case),
   * or undefined when the unit has no such route. `base` is the URL prefix the
   * unit is reached under, for the `endpoint` event of an http+sse stream.
   */
  handlerFor(method: string, sub: string, base: string): Handler | undefined {
    const handler = this.localHandlerFor(method, sub, base);
    const cluster = this.shared.cluster;
    if (!handler || !cluster) return handler;
    // A session another replica holds is forwarded to it before this unit looks for it (its URL is kept).
    return (req, res) => (cluster.route(req, res, sub, this.local) ? undefined : handler(req, res));
  }

  private readonly local: LocalSessions = { streamable: (id) => this.streamable.has(id), sse: (id) => this.sse.has(id) };

  private localHandlerFor(method: string, sub: string, base: string): Handler | undefined {
    if (sub === '/mcp') {
      if (method === 'POST') return this.mcpPost;
      // GET and DELETE are 2025 session operations; a modern client never sends them (digest §2.4).
      if (method === 'GET') return this.sessionOnly((req, res) => this.streamable.handleGet(req, res));
      if (method === 'DELETE') return this.sessionOnly((req, res) => this.streamable.handleDelete(req, res));
      return (_req, res) => writeJsonError(res, 405, null, METHOD_NOT_ALLOWED, { allow: 'GET, POST, DELETE' });
    }
    if (sub === '/sse' && method === 'GET') return (req, res) => this.sse.handleGet(req, res, `${base}/messages`);
    if (sub === '/messages' && method === 'POST') return this.messagesPost;
    return undefined;
  }

  /** A WebSocket upgrade routed to this unit's `/ws`. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.ws.upgrade(req, socket, head);
  }

  /** Open downstream sessions per transport and modern requests being answered. */
  stats(): { streamableHttpSessions: number; sseSessions: number; wsSessions: number; modernRequests: number } {
    return { streamableHttpSessions: this.streamable.size, sseSessions: this.sse.size, wsSessions: this.ws.size, modernRequests: this.modern.size };
  }

  /** Ends every session and stream and aborts modern requests in flight. Handlers are not closed. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.modern.close();
      await Promise.allSettled([this.streamable.close(), this.sse.close(), this.ws.close()]);
    })();
    return this.closing;
  }

  private readonly mcpPost: Handler = async (req, res) => {
    const read = await readJsonBody(req, this.shared.maxBodyBytes, this.shared.maxJsonDepth);
    if (!read.ok) return this.refuseBody(res, read);
    const headers = flatHeaders(req);
    const route = classifyPost(read.body, headers, (id) => this.streamable.has(id));
    if (route.route === 'reject') {
      this.shared.metrics?.refused('validation');
      return writeJsonError(res, route.status, null, route.error);
    }
    if (this.shared.cluster?.routePost(req, res, read.body, route.route, this.local)) return;
    // Awaited, not returned: an async function resolving with a promise costs two more turns (issue 17).
    if (route.route === 'modern') return void (await this.modern.handle(req, res, read.body, headers));
    // A session's handler sees messages, not this POST: its trace headers travel on the messages (tracing on only).
    attachTraceHeaders(read.body, req.headers);
    return this.streamable.handlePost(req, res, read.body);
  };

  private readonly messagesPost: Handler = async (req, res) => {
    const read = await readJsonBody(req, this.shared.maxBodyBytes, this.shared.maxJsonDepth);
    if (!read.ok) return this.refuseBody(res, read);
    return this.sse.handlePost(req, res, read.body);
  };

  /** A body that could not be read: too large (413, the connection closed after) or not JSON. */
  private refuseBody(res: ServerResponse, read: { status: number; error: { code: number; message: string } }): void {
    this.shared.metrics?.refused(read.status === 413 ? 'limits' : 'validation');
    writeJsonError(res, read.status, null, read.error, read.status === 413 ? { connection: 'close' } : {});
  }

  private sessionOnly(op: Handler): Handler {
    return (req, res) => {
      if (req.headers['mcp-session-id'] === undefined) return writeJsonError(res, 405, null, METHOD_NOT_ALLOWED, { allow: 'POST' });
      return op(req, res);
    };
  }
}
