import type {
  InitializeRequestParams,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
  RequestId,
} from '@modelcontextprotocol/server';
import type { LegacyChannel, LegacyHandler, LegacyRequestContext, LegacySessionHandler, LegacySessionInfo } from '../contracts/downstream.js';
import { LEGACY_FEATURES } from '../epochs/versions.js';
import { toRpcErrorBody } from '../errors.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { idText } from '../jsonrpc/id-codec.js';
import {
  errorResponse,
  isNotification,
  isRequest,
  isRequestId,
  isResponse,
  messageShapeProblem,
  resultResponse,
} from '../jsonrpc/messages.js';
import type { Principal } from '../identity/principal.js';
import type { Logger } from '../log.js';
import { legacyParamsProblem } from './legacy-params.js';
import { invalidParamsError } from './params-shape.js';
import { PendingClientRequests } from './pending-client-requests.js';
import { LazyAbort } from '../links/lazy-abort.js';
import { IdTable } from '../heap/id-table.js';

/** How long a client may take to answer a bridged server→client request, unless told otherwise. */
const DEFAULT_INPUT_TIMEOUT_MS = 10 * 60_000;

export interface DriverOptions {
  handler: LegacyHandler;
  transport: LegacySessionInfo['transport'];
  sessionId: string;
  /** Writes a message on the session's own channel (GET stream / http+sse stream / WebSocket / stdout); false when it cannot. */
  send(msg: JSONRPCMessage): boolean;
  logger: Logger;
  inputTimeoutMs?: number;
  /** Who opened the session (the gate's principal for the initialize request). */
  principal?: Principal;
}

/** A stream tied to one incoming request (Streamable HTTP: that POST's SSE stream). */
export interface RelatedStream {
  send(msg: JSONRPCMessage): boolean;
}

type Answer = JSONRPCResponse | JSONRPCResponse[] | undefined;

/** Client notifications the driver handles itself (digest §4.1); the rest go to the bridge. */
const LOCAL_NOTIFICATIONS: Record<string, (d: LegacySessionDriver, n: JSONRPCNotification) => void> = {
  'notifications/initialized': () => {},
  'notifications/cancelled': (d, n) => d.cancelInflight((n.params as { requestId?: unknown } | undefined)?.requestId),
};

/**
 * Transport-neutral handling of one downstream legacy session: the initialize
 * handshake, ping, cancellation, server→client requests and batches (digest
 * §4.1, §4.4, §5.1). Faces frame; the bridge behind `LegacyHandler` translates.
 */
export class LegacySessionDriver {
  private session: LegacySessionHandler | undefined;
  private sessionInfo: LegacySessionInfo | undefined;
  private opening = false;
  private closed = false;
  private readonly inflight = new IdTable<string, RequestContext>();
  private readonly pending: PendingClientRequests;
  private readonly closeListeners: Array<() => void> = [];
  private readonly log: Logger;

  constructor(private readonly opts: DriverOptions) {
    this.pending = new PendingClientRequests(opts.inputTimeoutMs ?? DEFAULT_INPUT_TIMEOUT_MS);
    this.log = opts.logger.child({ sessionId: opts.sessionId, transport: opts.transport });
  }

  get initialized(): boolean {
    return this.sessionInfo !== undefined;
  }

  /** Who opened the session; only the same principal may use it. */
  get principal(): Principal | undefined {
    return this.opts.principal;
  }

  get info(): LegacySessionInfo | undefined {
    return this.sessionInfo;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Feeds one incoming message or batch. `related` writes on the stream tied to
   * this incoming request; when absent, `send` is used. Resolves with what to
   * answer directly: a response (or array for batches) for requests, undefined
   * for notifications, responses, and requests the client cancelled (2025
   * cancellation.mdx: no response after a cancel).
   */
  receive(msg: unknown, related?: RelatedStream): Promise<Answer> {
    // Not async: a single message's promise is handed on as it is, without wrapping it again.
    if (!Array.isArray(msg)) return this.receiveOne(msg, related, false);
    return this.receiveBatch(msg, related);
  }

  private async receiveBatch(msg: unknown[], related: RelatedStream | undefined): Promise<Answer> {
    const problem = this.batchProblem(msg);
    if (problem) return errorResponse(null, { code: RpcCode.InvalidRequest, message: problem });
    const answers = await Promise.all(msg.map((m) => this.receiveOne(m, related, true)));
    const responses = answers.filter((a): a is JSONRPCResponse => a !== undefined);
    return responses.length > 0 ? responses : undefined;
  }

  /** Ends the session: aborts in-flight requests, rejects pending server→client requests, closes the bridge session. */
  async close(reason: string): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.log.debug('legacy.session.close', { reason });
    // Pending client requests first, so they reject as "session closed" rather than as cancelled.
    this.pending.close(reason);
    for (const ctx of this.inflight.values()) ctx.cancel.abort(new Error(`session closed: ${reason}`));
    try {
      await this.session?.close();
    } catch (err) {
      this.log.warn('legacy.session.close_failed', { err });
    }
    for (const l of this.closeListeners.splice(0)) l();
  }

  /** Called once, after the session has closed for any reason. */
  onClose(listener: () => void): void {
    if (this.closed) queueMicrotask(listener);
    else this.closeListeners.push(listener);
  }

  /** notifications/cancelled from the client: abort that request's `ctx.signal`. */
  cancelInflight(requestId: unknown): void {
    if (!isRequestId(requestId)) return;
    const ctx = this.inflight.get(idKey(requestId));
    if (!ctx) return;
    ctx.cancelledByClient = true;
    ctx.cancel.abort(new Error('cancelled by the client'));
  }

  private batchProblem(batch: unknown[]): string | undefined {
    if (batch.length === 0) return 'Invalid Request: empty batch';
    const version = this.sessionInfo?.protocolVersion;
    // Batching exists only in 2025-03-26 (digest §4.3 table), and never carries initialize (§4.1).
    if (version === undefined || !LEGACY_FEATURES.batching(version)) {
      return `Invalid Request: JSON-RPC batches are not supported in protocol version ${version ?? '(not initialized)'}`;
    }
    return undefined;
  }

  private receiveOne(msg: unknown, related: RelatedStream | undefined, inBatch: boolean): Promise<JSONRPCResponse | undefined> {
    // A request to the bridge, the hot path: its promise goes back as it is.
    if (isRequest(msg) && msg.method !== 'initialize' && msg.method !== 'ping' && !this.closed && this.session && this.sessionInfo) {
      return this.handle(msg, this.session, this.sessionInfo, related);
    }
    return Promise.resolve(this.receiveOther(msg, related, inBatch));
  }

  private receiveOther(msg: unknown, related: RelatedStream | undefined, inBatch: boolean): JSONRPCResponse | Promise<JSONRPCResponse | undefined> | undefined {
    const problem = messageShapeProblem(msg);
    if (problem) return errorResponse(null, { code: RpcCode.InvalidRequest, message: `Invalid Request: ${problem}` });
    if (isResponse(msg)) {
      if (!this.pending.settle(msg)) this.log.debug('legacy.response.unmatched', { id: msg.id });
      return undefined;
    }
    if (isNotification(msg)) {
      const local = LOCAL_NOTIFICATIONS[msg.method];
      if (local) local(this, msg);
      else if (this.session && !this.closed) this.session.handleNotification(msg);
      else this.log.debug('legacy.notification.dropped', { method: msg.method });
      return undefined;
    }
    const req = msg as JSONRPCRequest;
    if (req.method === 'initialize') return inBatch ? invalid(req.id, 'initialize must not be sent in a batch') : this.initialize(req);
    if (req.method === 'ping') return resultResponse(req.id, {});
    if (this.closed) return errorResponse(req.id, { code: RpcCode.InternalError, message: 'Session closed' });
    if (!this.session || !this.sessionInfo) return invalid(req.id, 'Bad Request: Server not initialized');
    return this.handle(req, this.session, this.sessionInfo, related);
  }

  private async initialize(req: JSONRPCRequest): Promise<JSONRPCResponse> {
    if (this.session || this.opening) return invalid(req.id, 'Invalid Request: Server already initialized');
    if (this.closed) return errorResponse(req.id, { code: RpcCode.InternalError, message: 'Session closed' });
    const params = req.params as InitializeRequestParams | undefined;
    if (typeof params?.protocolVersion !== 'string' || typeof params.capabilities !== 'object' || params.capabilities === null) {
      return errorResponse(req.id, { code: RpcCode.InvalidParams, message: 'Invalid params: initialize needs protocolVersion and capabilities' });
    }
    const base = {
      id: this.opts.sessionId,
      clientCapabilities: params.capabilities,
      clientInfo: params.clientInfo ?? { name: 'unknown', version: '0' },
      transport: this.opts.transport,
      principal: this.opts.principal,
    };
    const channel: LegacyChannel = {
      notify: (n) => !this.closed && this.opts.send(n),
      request: (method, p, o) => this.pending.start(method, p, this.opts.send, o),
    };
    this.opening = true;
    try {
      const { result, session } = await this.opts.handler.openSession(params, base, channel);
      if (this.closed) {
        // Closed while the bridge was opening: free what it opened.
        await session.close().catch(() => {});
        return errorResponse(req.id, { code: RpcCode.InternalError, message: 'Session closed' });
      }
      this.session = session;
      // The key before the spread: a spread copy given more keys gets a hidden class of its own (log.ts, child).
      this.sessionInfo = { protocolVersion: result.protocolVersion, ...base };
      this.log.info('legacy.session.open', { protocolVersion: result.protocolVersion, client: base.clientInfo.name });
      return resultResponse(req.id, result as unknown as Record<string, unknown>);
    } catch (err) {
      this.log.info('legacy.session.refused', { err });
      return errorResponse(req.id, toRpcErrorBody(err));
    } finally {
      this.opening = false;
    }
  }

  private async handle(req: JSONRPCRequest, session: LegacySessionHandler, info: LegacySessionInfo, related: RelatedStream | undefined): Promise<JSONRPCResponse | undefined> {
    // Malformed params stop here, in-band like an SDK v1 server's -32602, before any bridge or upstream sees them.
    const bad = legacyParamsProblem(req.method, req.params);
    if (bad) return errorResponse(req.id, invalidParamsError(req.method, bad));
    const key = idKey(req.id);
    if (this.inflight.has(key)) return invalid(req.id, `Invalid Request: request id ${idText(req.id)} is already in flight`);
    const ctx = new RequestContext(this, info, related);
    this.inflight.set(key, ctx);
    try {
      const response = await session.handleRequest(req, ctx);
      return ctx.cancelledByClient ? undefined : response;
    } catch (err) {
      // The contract says handleRequest never rejects; answer anyway so nothing hangs.
      this.log.error('legacy.request.threw', { method: req.method, id: req.id, err });
      return ctx.cancelledByClient ? undefined : errorResponse(req.id, toRpcErrorBody(err));
    } finally {
      this.inflight.delete(key);
    }
  }

  /** @internal A notification for a request context: on its own stream, else the session's; false once closed. */
  notifyFor(related: RelatedStream | undefined, n: JSONRPCNotification): boolean {
    if (this.closed) return false;
    return related ? related.send(n) : this.opts.send(n);
  }

  /** @internal Starts a server→client request for a request context. */
  startClientRequest(ctx: RequestContext, method: string, p: Record<string, unknown> | undefined, o: { signal?: AbortSignal; timeoutMs?: number } | undefined) {
    const signal = o?.signal ? AbortSignal.any([ctx.signal, o.signal]) : ctx.signal;
    return this.pending.start(method, p, (m) => (ctx.related ? ctx.related.send(m) : this.opts.send(m)), { timeoutMs: o?.timeoutMs, signal });
  }
}

/**
 * What the bridge gets with one request (LegacyRequestContext), as one object
 * with methods instead of a controller and three closures per request.
 */
class RequestContext implements LegacyRequestContext {
  /** Aborted on a client cancel or the session's end; its AbortSignal is built only if someone reads `signal`. */
  readonly cancel = new LazyAbort();
  cancelledByClient = false;

  constructor(
    private readonly driver: LegacySessionDriver,
    readonly session: LegacySessionInfo,
    readonly related: RelatedStream | undefined,
  ) {}

  get signal(): AbortSignal {
    return this.cancel.signal;
  }

  notify(n: JSONRPCNotification): boolean {
    return this.driver.notifyFor(this.related, n);
  }

  request(method: string, params: Record<string, unknown> | undefined, opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<Record<string, unknown>> {
    return this.driver.startClientRequest(this, method, params, opts);
  }
}

function idKey(id: RequestId): string {
  return `${typeof id}:${id}`;
}

function invalid(id: RequestId | null, message: string): JSONRPCResponse {
  return errorResponse(id, { code: RpcCode.InvalidRequest, message });
}
