import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import type { LegacyRequestContext, LegacySessionHandler } from '../../src/contracts/downstream.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import { errorResponse, responseFor, type RpcOutcome } from '../../src/jsonrpc/messages.js';
import { toRpcErrorBody } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import { isMcpLogLevel, MCP_LOG_LEVELS } from './log-levels.js';
import type { PooledUpstream } from './pooled-upstream.js';
import { relayCall } from './relay-call.js';
import type { DownstreamRecord } from './session-registry.js';
import { linkedSignal } from '../../src/links/linked-signal.js';

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
  readonly #abort = new AbortController();
  readonly #logger: Logger;
  readonly #timeoutMs: number;

  constructor(
    readonly upstream: PooledUpstream,
    readonly record: DownstreamRecord,
    opts: { logger: Logger; callTimeoutMs: number },
  ) {
    this.#logger = opts.logger;
    this.#timeoutMs = opts.callTimeoutMs;
  }

  async handleRequest(req: JSONRPCRequest, ctx: LegacyRequestContext): Promise<JSONRPCResponse> {
    if (this.#abort.signal.aborted) return errorResponse(req.id, { code: RpcCode.InternalError, message: 'session closed' });
    const local = LOCAL[req.method];
    if (local) return responseFor(req.id, await local(this, req.params as Params));
    const linked = linkedSignal([ctx.signal, this.#abort.signal]);
    const signal = linked.signal;
    let lease;
    try {
      lease = await this.upstream.lease(this.record, req.method, signal);
    } catch (err) {
      linked.dispose();
      return errorResponse(req.id, toRpcErrorBody(err));
    }
    const session = lease.session;
    try {
      const levelSet = this.upstream.ensureLevel(session, this.record.key);
      if (levelSet) await levelSet;
      return await relayCall(session, req, ctx, {
        signal,
        timeoutMs: this.#timeoutMs,
        serverRequests: this.upstream.tiesServerRequests(this.record, req.method),
        level: () => this.record.level,
        answered: (method) => this.upstream.roots.answered(session, this.record, method),
      });
    } finally {
      lease.release();
      linked.dispose();
    }
  }

  handleNotification(n: JSONRPCNotification): void {
    // Roots belong to the client, and every session on the key was opened with its capabilities (§4.1).
    if (n.method === 'notifications/roots/list_changed') this.upstream.broadcast(this.record, n);
    else this.#logger.debug('l2l.client_notification_dropped', { method: n.method, session: this.record.id });
  }

  async close(): Promise<void> {
    if (this.#abort.signal.aborted) return;
    this.#abort.abort();
    await this.upstream.release(this.record);
  }
}
