import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import type { LegacyRequestContext, LegacySessionHandler } from '../../src/contracts/downstream.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import { errorResponse, responseFor, type RpcOutcome } from '../../src/jsonrpc/messages.js';
import { toRpcErrorBody } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import { isMcpLogLevel, MCP_LOG_LEVELS, type McpLogLevel } from './log-levels.js';
import type { PooledUpstream } from './pooled-upstream.js';
import { relayCall } from './relay-call.js';
import type { DownstreamRecord } from './session-registry.js';
import type { SessionLease } from '../../src/links/session-pool.js';

type Params = Record<string, unknown> | undefined;
type LocalHandler = (session: PooledSession, params: Params) => Promise<RpcOutcome>;

function invalidParams(message: string): RpcOutcome {
  return { error: { code: RpcCode.InvalidParams, message } };
}

/**
 * Requests whose effect is per downstream session while the upstream session is
 * shared: the bridge keeps the state and talks to the upstream on the key's behalf.
 */
const LOCAL: Readonly<Partial<Record<string, LocalHandler>>> = {
  'resources/subscribe': (s, p) =>
    typeof p?.uri === 'string' ? s.upstream.subscribe(s.record, p.uri, p) : Promise.resolve(invalidParams('resources/subscribe needs params.uri (a string)')),
  'resources/unsubscribe': (s, p) =>
    typeof p?.uri === 'string' ? s.upstream.unsubscribe(s.record, p.uri) : Promise.resolve(invalidParams('resources/unsubscribe needs params.uri (a string)')),
  'logging/setLevel': (s, p) =>
    isMcpLogLevel(p?.level)
      ? s.upstream.setLevel(s.record, p.level)
      : Promise.resolve(invalidParams(`logging/setLevel needs params.level, one of ${MCP_LOG_LEVELS.join(', ')}`)),
};

/** One downstream legacy session served from a shared pool of upstream sessions. */
export class PooledSession implements LegacySessionHandler {
  #closed = false;
  readonly #logger: Logger;
  readonly #timeoutMs: number;
  /** The session's log level, read when a log message arrives (one closure per session, not per call). */
  readonly #level = (): McpLogLevel | undefined => this.record.level;

  constructor(
    readonly upstream: PooledUpstream,
    readonly record: DownstreamRecord,
    opts: { logger: Logger; callTimeoutMs: number },
  ) {
    this.#logger = opts.logger;
    this.#timeoutMs = opts.callTimeoutMs;
  }

  handleRequest(req: JSONRPCRequest, ctx: LegacyRequestContext): Promise<JSONRPCResponse> {
    if (this.#closed) return Promise.resolve(errorResponse(req.id, { code: RpcCode.InternalError, message: 'session closed' }));
    const local = LOCAL[req.method];
    if (local) return local(this, req.params as Params).then((outcome) => responseFor(req.id, outcome));
    // The request's own cancel alone: the face aborts it when the client cancels and when the session ends
    // (LegacyRequestContext), and linking it to a signal of this session's cost an AbortSignal per call.
    return this.upstream.lease(this.record, req.method, ctx.cancel ?? ctx.signal).then(
      (lease) => this.#relay(lease, req, ctx),
      (err: unknown) => errorResponse(req.id, toRpcErrorBody(err)),
    );
  }

  async #relay(lease: SessionLease, req: JSONRPCRequest, ctx: LegacyRequestContext): Promise<JSONRPCResponse> {
    const session = lease.session;
    try {
      const levelSet = this.upstream.ensureLevel(session, this.record.key);
      if (levelSet) await levelSet;
      const serverRequests = this.upstream.tiesServerRequests(this.record, req.method);
      return await relayCall(session, req, ctx, {
        signal: ctx.cancel ?? ctx.signal,
        timeoutMs: this.#timeoutMs,
        serverRequests,
        level: this.#level,
        answered: serverRequests ? (method) => this.upstream.roots.answered(session, this.record, method) : undefined,
      });
    } finally {
      lease.release();
    }
  }

  handleNotification(n: JSONRPCNotification): void {
    // Roots belong to the client, and every session on the key was opened with its capabilities (§4.1).
    if (n.method === 'notifications/roots/list_changed') this.upstream.broadcast(this.record, n);
    else this.#logger.debug('l2l.client_notification_dropped', { method: n.method, session: this.record.id });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.upstream.release(this.record);
  }
}
