import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { LegacyHandler } from '../contracts/downstream.js';
import { isSupportedLegacyVersion, LEGACY_FEATURES, LEGACY_VERSIONS } from '../epochs/versions.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import { errorResponse, isRequest, isResponse } from '../jsonrpc/messages.js';
import type { Logger } from '../log.js';
import { upstreamRefusal } from './auth-upstream-refusal.js';
import { LazySseReply } from './lazy-sse-reply.js';
import { LegacySessionDriver } from './legacy-session-driver.js';
import { legacyHttpError } from './legacy-http-error.js';
import type { GateCheck } from './request-gate.js';
import { principalOf, type Principal } from '../identity/principal.js';
import { ownedBy } from '../identity/owned-by.js';
import type { SessionBudget } from './session-budget.js';
import { SessionStreams } from './session-streams.js';

/** What every legacy face class is built with. */
export interface LegacyFaceOptions {
  handler: LegacyHandler;
  logger: Logger;
  heartbeatMs: number;
  sessionIdleMs: number;
  allowOrigins: string[];
  inputTimeoutMs?: number;
  /** Shared bound on downstream sessions across the legacy faces; unbounded when absent. */
  sessions?: SessionBudget;
  /** Events kept per Streamable HTTP session for `Last-Event-ID` (`--event-store-max`; 0: none). Default 1000. */
  eventStoreMax?: number;
  /** Largest WebSocket message (frames are the only body the WebSocket face reads). */
  maxMessageBytes?: number;
  /** JSON nesting bound for WebSocket frames (HTTP bodies are checked by the app). */
  maxJsonDepth?: number;
  /** Host / Origin / token checks for requests that bypass the app (WebSocket upgrades). */
  gate?: GateCheck;
  /** New session ids (a cluster names the owning replica in them); 256 random bits in hex when absent. */
  mintSessionId?: () => string;
}

interface HttpSession {
  id: string;
  driver: LegacySessionDriver;
  /** The session's SSE streams and their event store; built with the first stream. */
  streams: SessionStreams | undefined;
  replies: Set<LazySseReply>;
  /** POSTs being handled right now; a busy session is never idle. */
  busy: number;
  idleTimer: NodeJS.Timeout | undefined;
  /** When the session last became idle (performance.now()). */
  idleSince: number;
  /** `mcp-session-id` for every reply (built once per session). */
  headers: Record<string, string>;
}

const SESSION_HEADER = 'mcp-session-id';

/**
 * How long a request's reply may stay JSON for a client whose version knows
 * priming events: a call still running then switches to SSE and primes the
 * client, so a connection lost from there on is resumed, not the call lost.
 * Calls answered sooner (most) stay plain JSON and store nothing.
 */
const JSON_WINDOW_MS = 50;

const DEFAULT_EVENT_STORE_MAX = 1000;

/**
 * The server side of 2025-03-26…2025-11-25 Streamable HTTP (digest §4.3):
 * sessions minted at initialize, POST replies as JSON or SSE, one standalone
 * GET stream per session, streams resumed by GET + Last-Event-ID
 * (session-streams.ts), DELETE, and idle expiry.
 */
export class StreamableHttpSessions {
  private readonly sessions = new Map<string, HttpSession>();
  private closing = false;

  constructor(private readonly opts: LegacyFaceOptions) {}

  get size(): number {
    return this.sessions.size;
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** A POST already parsed and classified legacy by the app (body is the parsed JSON). */
  async handlePost(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const accept = header(req, 'accept') ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return legacyHttpError(res, 406, RpcCode.ServerError, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    const messages = Array.isArray(body) ? body : [body];
    const initCount = messages.filter((m) => isRequest(m) && m.method === 'initialize').length;
    const sid = header(req, SESSION_HEADER);
    if (initCount > 0 && messages.length > 1) {
      return legacyHttpError(res, 400, RpcCode.InvalidRequest, 'Invalid Request: Only one initialization request is allowed');
    }
    if (initCount > 0 && sid === undefined) return this.initialize(req, res, body);
    const s = this.lookup(req, res, sid);
    if (!s) return;
    if (initCount > 0) return legacyHttpError(res, 400, RpcCode.InvalidRequest, 'Invalid Request: Server already initialized');
    await this.feed(s, req, res, body, messages.some(isRequest));
  }

  /** Opens the session's standalone stream (only called with an Mcp-Session-Id header). */
  handleGet(req: IncomingMessage, res: ServerResponse): void {
    const s = this.lookup(req, res, header(req, SESSION_HEADER));
    if (!s) return;
    if (!(header(req, 'accept') ?? '').includes('text/event-stream')) {
      return legacyHttpError(res, 406, RpcCode.ServerError, 'Not Acceptable: Client must accept text/event-stream');
    }
    const streams = this.streamsOf(s);
    // Resumption is always a GET with Last-Event-ID, whichever method opened the stream (digest §4.3);
    // without a store no id was ever issued, so the header names nothing and the GET is a fresh stream.
    const lastEventId = header(req, 'last-event-id');
    if (lastEventId !== undefined && streams.resumable) {
      const refusal = streams.resume(res, lastEventId);
      if (refusal) legacyHttpError(res, 400, RpcCode.ServerError, refusal);
      return;
    }
    if (streams.getConnected) return legacyHttpError(res, 409, RpcCode.ServerError, 'Conflict: Only one SSE stream is allowed per session');
    streams.openGet(res);
  }

  /** Ends a session at the client's request (digest §4.3 Sessions). */
  async handleDelete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const s = this.lookup(req, res, header(req, SESSION_HEADER));
    if (!s) return;
    await s.driver.close('client sent DELETE');
    res.writeHead(200).end();
  }

  /** Ends every stream and session. */
  async close(): Promise<void> {
    this.closing = true;
    const all = [...this.sessions.values()];
    await Promise.all(all.map((s) => s.driver.close('shutting down')));
    for (const s of all) for (const r of s.replies) r.finish(undefined);
  }

  /** Steps shared by GET, DELETE and non-initialize POST: the session id, then the version header. */
  private lookup(req: IncomingMessage, res: ServerResponse, sid: string | undefined): HttpSession | undefined {
    if (sid === undefined) {
      legacyHttpError(res, 400, RpcCode.ServerError, 'Bad Request: Mcp-Session-Id header is required');
      return undefined;
    }
    const s = this.sessions.get(sid);
    // Another principal's session does not exist for this one (DESIGN "Identity").
    if (!s || !ownedBy(s.driver.principal, req, this.opts.logger, sid)) {
      legacyHttpError(res, 404, RpcCode.SessionNotFound, 'Session not found');
      return undefined;
    }
    // Missing header → 2025-03-26 (digest §4.3); present and unknown → 400.
    const version = header(req, 'mcp-protocol-version');
    if (version !== undefined && !isSupportedLegacyVersion(version)) {
      legacyHttpError(res, 400, RpcCode.ServerError, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${LEGACY_VERSIONS.join(', ')})`);
      return undefined;
    }
    return s;
  }

  private async initialize(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (this.closing) return legacyHttpError(res, 503, RpcCode.ServerError, 'Service Unavailable: shutting down');
    const principal = principalOf(req);
    const release = this.opts.sessions ? this.opts.sessions.tryAcquire(principal?.id) : () => {};
    if (!release) {
      const id = isRequest(body) ? body.id : null;
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end(stringifyJsonRpc(errorResponse(id, { code: RpcCode.ServerError, message: this.opts.sessions!.refusal(principal?.id) })));
      return;
    }
    const s = this.createSession(this.opts.mintSessionId?.() ?? randomBytes(32).toString('hex'), principal);
    s.driver.onClose(release);
    const answer = await s.driver.receive(body);
    if (!s.driver.initialized || this.closing) {
      await s.driver.close('initialize refused');
      const refused = Array.isArray(answer) ? undefined : upstreamRefusal(principal, answer, req);
      res.writeHead(refused?.status ?? 200, { 'content-type': 'application/json', ...refused?.headers }).end(stringifyJsonRpc(answer));
      return;
    }
    this.sessions.set(s.id, s);
    res.writeHead(200, { 'content-type': 'application/json', [SESSION_HEADER]: s.id }).end(stringifyJsonRpc(answer));
    this.touch(s, 0);
  }

  private createSession(id: string, principal: Principal | undefined): HttpSession {
    const s: HttpSession = { id, driver: undefined!, streams: undefined, replies: new Set(), busy: 0, idleTimer: undefined, idleSince: 0, headers: { [SESSION_HEADER]: id } };
    s.driver = new LegacySessionDriver({
      handler: this.opts.handler,
      transport: 'streamable-http',
      sessionId: id,
      principal,
      logger: this.opts.logger,
      inputTimeoutMs: this.opts.inputTimeoutMs,
      send: (m) => this.sendStandalone(s, m),
    });
    s.driver.onClose(() => this.forget(s));
    return s;
  }

  private async feed(s: HttpSession, req: IncomingMessage, res: ServerResponse, body: unknown, hasRequests: boolean): Promise<void> {
    this.touch(s, +1);
    const headers = s.headers;
    const reply = hasRequests
      ? new LazySseReply(res, { heartbeatMs: this.opts.heartbeatMs, headers, logger: this.opts.logger, openStream: (r) => this.streamsOf(s).openPost(r) })
      : undefined;
    const jsonWindow = reply && this.primes(s) ? setTimeout(() => reply.startStream(), JSON_WINDOW_MS) : undefined;
    jsonWindow?.unref();
    try {
      if (!reply) {
        const answer = await s.driver.receive(body);
        // Only malformed messages get an answer here; accepted notifications and responses get 202, no body.
        if (answer !== undefined) res.writeHead(400, { 'content-type': 'application/json', ...headers }).end(stringifyJsonRpc(answer));
        else res.writeHead(202, headers).end();
        return;
      }
      s.replies.add(reply);
      // A POST stream the client closed is not a cancel (2025 transports.mdx); later non-responses fall back to the GET stream.
      const related = { send: (m: JSONRPCMessage) => reply.send(m) || (!isResponse(m) && this.sendStandalone(s, m)) };
      const answer = await s.driver.receive(body, related);
      const refused = Array.isArray(answer) ? undefined : upstreamRefusal(s.driver.principal, answer, req);
      if (refused) reply.finish(answer, refused.status, refused.headers);
      else reply.finish(answer);
    } finally {
      clearTimeout(jsonWindow);
      if (reply) s.replies.delete(reply);
      this.touch(s, -1);
    }
  }

  private sendStandalone(s: HttpSession, m: JSONRPCMessage): boolean {
    return s.streams?.sendStandalone(m) ?? false;
  }

  /** Built on the session's first SSE stream: an idle session holds none (bench row 4). */
  private streamsOf(s: HttpSession): SessionStreams {
    s.streams ??= new SessionStreams({
      sse: { heartbeatMs: this.opts.heartbeatMs, headers: s.headers, logger: this.opts.logger },
      maxEvents: this.opts.eventStoreMax ?? DEFAULT_EVENT_STORE_MAX,
      priming: this.primes(s),
      changed: () => this.touch(s, 0),
    });
    return s.streams;
  }

  /** Priming events and the JSON window: a store to resume from, and a version whose clients read empty data (SDK v1 sends them from 2025-11-25). */
  private primes(s: HttpSession): boolean {
    const version = s.driver.info?.protocolVersion;
    return (this.opts.eventStoreMax ?? DEFAULT_EVENT_STORE_MAX) > 0 && version !== undefined && LEGACY_FEATURES.ssePriming(version);
  }

  /**
   * A session with no POST in progress and no open GET stream expires
   * sessionIdleMs after it became so. The timer is armed once and, when it
   * fires, waits out what is left (re-arming it on every POST cost a
   * clearTimeout + setTimeout per call); a session busy or streaming then
   * arms it again when it next becomes idle.
   */
  private touch(s: HttpSession, delta: number): void {
    s.busy += delta;
    if (s.busy > 0 || s.streams?.getConnected || !this.sessions.has(s.id)) return;
    s.idleSince = performance.now();
    if (s.idleTimer === undefined) this.armIdle(s, this.opts.sessionIdleMs);
  }

  private armIdle(s: HttpSession, ms: number): void {
    s.idleTimer = setTimeout(() => {
      s.idleTimer = undefined;
      if (s.busy > 0 || s.streams?.getConnected || !this.sessions.has(s.id)) return;
      const left = this.opts.sessionIdleMs - (performance.now() - s.idleSince);
      if (left > 0) this.armIdle(s, left);
      else void s.driver.close('idle');
    }, ms);
    s.idleTimer.unref();
  }

  private forget(s: HttpSession): void {
    this.sessions.delete(s.id);
    if (s.idleTimer) clearTimeout(s.idleTimer);
    s.streams?.close();
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
