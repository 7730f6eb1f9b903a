import { randomUUID } from 'node:crypto';
import type { InitializeResult, JSONRPCNotification, JSONRPCRequest, RequestId } from '@modelcontextprotocol/server';
import type { CallHandlers, LegacyUpstreamSession, OutboundRequest, UnsolicitedHandlers, UpstreamInit } from '../contracts/upstream.js';
import { isSupportedLegacyVersion, LEGACY_FEATURES } from '../epochs/versions.js';
import { BridgeError, RpcError, TransportError, toRpcErrorBody, type BridgeErrorCode } from '../errors.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { isNotification, isRequest, isResponse, notification, outcomeOf, request, responseFor, type RpcOutcome } from '../jsonrpc/messages.js';
import type { Logger } from '../log.js';
import { DeadlineTimer } from './deadline-timer.js';
import { GetStream } from './get-stream.js';
import type { HttpSessionClient } from './http-session-client.js';
import { readMessageStream } from './message-stream-reader.js';
import { PostExchange, type PendingCall } from './post-exchange.js';
import { ProgressTokens } from './progress-tokens.js';
import { SessionCall, type SessionCallOwner } from './session-call.js';
import { SessionMemo } from './session-memo.js';
import type { UpstreamReply } from './upstream-reply.js';
import { IdTable } from '../heap/id-table.js';

export interface HttpSessionOptions {
  logger: Logger;
  callTimeoutMs: number;
}

/** How long `open` waits for the GET stream before answering anyway. */
const GET_STREAM_WAIT_MS = 2_000;

/** A per-call deadline this long (setTimeout's maximum) or longer is none. */
const NO_DEADLINE_MS = 2 ** 31 - 1;

/** Unsolicited notifications kept for the session's owner while it has none yet. */
const EARLY_NOTIFICATIONS_MAX = 64;

/**
 * One initialize-era session over Streamable HTTP (digest §4.1, §4.3): server
 * requests on a POST's SSE stream belong to that call (`correlates`), the GET
 * stream carries the unsolicited rest. `call()` always resolves with an
 * outcome; local failures (timeout, abort, expiry, network) are -32603 errors.
 */
export class HttpSession implements LegacyUpstreamSession {
  readonly id = randomUUID();
  readonly correlates = true;
  readonly init: UpstreamInit;
  initializeResult!: InitializeResult;
  private readonly client: HttpSessionClient;
  private readonly opts: HttpSessionOptions;
  private readonly log: Logger;
  private readonly pending = new IdTable<RequestId, SessionCall>();
  /** One timer for every call's deadline, not a setTimeout per call (issue 17, as the modern link has). */
  private readonly deadlines = new DeadlineTimer<SessionCall>(
    () => this.pending.values(),
    (call) => this.cancel(call, `upstream call ${call.method} timed out after ${call.timeoutMs} ms`, 'BRIDGE_ERR_TIMEOUT'),
  );
  private readonly progress = new ProgressTokens();
  /** Server requests being answered; one the server cancels gets no late answer (digest §4.1). */
  private readonly inbound = new IdTable<RequestId, { cancelled: boolean }>();
  private readonly closeListeners: Array<(reason: string) => void> = [];
  private readonly exchange: PostExchange;
  private unsolicited: UnsolicitedHandlers | undefined;
  /** Unsolicited notifications that arrived before any handler was set. */
  private readonly early: JSONRPCNotification[] = [];
  private getStream: GetStream | undefined;
  private nextId = 1;
  private endReason: string | undefined;
  /** Log level and subscriptions set through this session, replayed after a re-initialize. */
  private readonly memo = new SessionMemo();
  /** Set while the session is being initialized again under a new id; calls wait for it. */
  private reinit: Promise<boolean> | undefined;

  private constructor(client: HttpSessionClient, init: UpstreamInit, opts: HttpSessionOptions) {
    this.client = client;
    this.init = init;
    this.opts = opts;
    this.log = opts.logger.child({ session: this.id });
    this.exchange = new PostExchange(client, {
      dispatch: (msg, call) => this.dispatch(msg, call),
      expire: (stale) => this.sessionGone(stale, 'a POST was refused'),
      logger: this.log,
    });
  }

  /**
   * initialize → keep Mcp-Session-Id → GET stream → initialized (digest §4.1, §4.3).
   * The GET stream opens before `initialized` because servers announce what they
   * set up on `initialized` (server-everything registers its capability-gated
   * tools then: `tools/list_changed`) at once, on a stream that must exist by
   * then. A server that refuses the GET before `initialized` is asked again after.
   */
  static async open(client: HttpSessionClient, init: UpstreamInit, opts: HttpSessionOptions): Promise<HttpSession> {
    const s = new HttpSession(client, init, opts);
    try {
      s.initializeResult = await s.handshake();
      await s.openGetStream();
      await s.notify('notifications/initialized');
      if (!s.getStream?.connected && !s.closed) await s.openGetStream();
    } catch (err) {
      await s.close();
      throw err;
    }
    s.log.debug('upstream.session.open', { protocolVersion: s.initializeResult.protocolVersion });
    return s;
  }

  private async openGetStream(): Promise<void> {
    this.getStream?.stop();
    // The stream belongs to the session id it was opened under; a later expiry names that one.
    const sessionId = this.client.sessionId;
    this.getStream = new GetStream({
      client: this.client,
      logger: this.log,
      onMessage: (m) => this.dispatch(m, undefined),
      onExpired: (detail) => {
        this.log.info('upstream.session.expired', { detail });
        void this.sessionGone(sessionId, detail);
      },
      onUnreachable: (detail) => this.end(`upstream unreachable (${detail})`),
    });
    await Promise.race([this.getStream.start(), new Promise((r) => setTimeout(r, GET_STREAM_WAIT_MS).unref())]);
  }

  get closed(): boolean {
    return this.endReason !== undefined;
  }

  private async handshake(): Promise<InitializeResult> {
    const { protocolVersion, capabilities, clientInfo } = this.init;
    const initReq = request(0, 'initialize', { protocolVersion, capabilities, clientInfo });
    let res: UpstreamReply;
    try {
      res = await this.client.post(initReq, AbortSignal.timeout(this.opts.callTimeoutMs));
    } catch (err) {
      if (err instanceof BridgeError) throw err;
      throw new BridgeError('BRIDGE_ERR_UPSTREAM_UNREACHABLE', `cannot reach ${this.client.url}: ${(err as Error).message}`, { cause: err });
    }
    if (!res.ok) throw new TransportError(res.status, await res.text().catch(() => ''), `upstream refused initialize with HTTP ${res.status}`);
    this.client.sessionId = res.header('mcp-session-id');
    let answer: RpcOutcome | undefined;
    try {
      await readMessageStream(res, {
        onMessage: (m) => {
          if (isResponse(m) && m.id === 0) answer = outcomeOf(m);
          else this.dispatch(m, undefined);
        },
      });
    } catch (err) {
      if (err instanceof TransportError) throw err;
      throw new BridgeError('BRIDGE_ERR_UPSTREAM_UNREACHABLE', `connection lost during initialize: ${(err as Error).message}`, { cause: err });
    }
    if (!answer) throw new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', 'upstream answered initialize without a JSON-RPC response');
    if ('error' in answer) throw RpcError.from(answer.error);
    const result = answer.result as unknown as InitializeResult;
    if (typeof result.protocolVersion !== 'string' || !isSupportedLegacyVersion(result.protocolVersion)) {
      // digest §4.1: a client that cannot use the offered version SHOULD disconnect.
      throw new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', `upstream offered protocol version ${String(result.protocolVersion)}, which the bridge does not speak`);
    }
    if (LEGACY_FEATURES.protocolVersionHeader(result.protocolVersion)) this.client.protocolVersion = result.protocolVersion;
    return result;
  }

  call(req: OutboundRequest, handlers: CallHandlers = {}, replaying = false): Promise<RpcOutcome> {
    if (this.closed) return Promise.resolve(internal(`upstream session is closed (${req.method})`, 'BRIDGE_ERR_UPSTREAM_CLOSED'));
    const id = this.nextId++;
    const params = this.progress.rewrite(req.params, id);
    const timeoutMs = handlers.timeoutMs ?? this.opts.callTimeoutMs;
    // setTimeout's maximum means no deadline (a parked MRTR call is timed by its TTL).
    const deadline = timeoutMs < NO_DEADLINE_MS ? performance.now() + timeoutMs : Infinity;
    let resolve!: (outcome: RpcOutcome) => void;
    const answered = new Promise<RpcOutcome>((r) => (resolve = r));
    const call = new SessionCall(id, req.method, handlers, deadline, timeoutMs, this.callOwner, resolve);
    if (handlers.signal?.aborted) {
      call.settle(internal(`upstream call ${req.method} cancelled`));
    } else {
      handlers.signal?.addEventListener('abort', call, { once: true });
      this.pending.set(id, call);
      if (deadline !== Infinity) this.deadlines.watch(call);
      const body = request(id, req.method, params);
      // Calls made while the session is re-initialized go out under the new id; the replay itself does not wait.
      if (this.reinit && !replaying) void this.reinit.then(() => this.exchange.run(call, body));
      else void this.exchange.run(call, body);
    }
    return answered.then((outcome) => {
      this.memo.remember(req.method, req.params, outcome);
      return outcome;
    });
  }

  /** How a call tells its session it ended, or that its caller aborted it. */
  private readonly callOwner: SessionCallOwner = {
    ended: (call) => {
      this.pending.delete(call.id);
      this.progress.release(call.id);
    },
    aborted: (call) => this.cancel(call, `upstream call ${call.method} cancelled`),
  };

  /**
   * The server no longer knows the session `staleId` (digest §4.3 Sessions: a
   * 404, or the 400 of SDK-example servers; a restarted server forgets them all).
   * Initialize again with the same init under a new `Mcp-Session-Id`, restore
   * the log level and subscriptions, and go on as the same session, so owners
   * and pooled leases never notice. Resolves false once the session has ended
   * instead (the server cannot be initialized again).
   */
  private sessionGone(staleId: string | undefined, detail: string): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (this.reinit) return this.reinit;
    if (staleId !== this.client.sessionId) return Promise.resolve(true);
    const run = this.reinitialize(staleId, detail).finally(() => {
      if (this.reinit === run) this.reinit = undefined;
    });
    this.reinit = run;
    return run;
  }

  private async reinitialize(staleId: string | undefined, detail: string): Promise<boolean> {
    this.log.info('upstream.session.reinitialize', { detail, previous: staleId });
    this.getStream?.stop();
    this.client.sessionId = undefined;
    try {
      this.initializeResult = await this.handshake();
      await this.openGetStream();
      await this.notify('notifications/initialized');
      for (const req of this.memo.replay()) {
        const outcome = await this.call(req, {}, true);
        if ('error' in outcome) this.log.warn('upstream.session.replay_failed', { method: req.method, error: outcome.error.message });
      }
    } catch (err) {
      this.end(`session expired (${detail}) and could not be initialized again: ${(err as Error).message}`);
      return false;
    }
    this.log.info('upstream.session.reinitialized', { previous: staleId, protocolVersion: this.initializeResult.protocolVersion });
    return !this.closed;
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    if (this.closed) throw new BridgeError('BRIDGE_ERR_UPSTREAM_CLOSED', 'upstream session is closed');
    await this.exchange.send(notification(method, params));
  }

  setUnsolicitedHandlers(h: UnsolicitedHandlers | undefined): void {
    this.unsolicited = h;
    if (h) for (const n of this.early.splice(0)) h.notification(n);
  }

  onClose(listener: (reason: string) => void): void {
    const reason = this.endReason;
    if (reason !== undefined) queueMicrotask(() => listener(reason));
    else this.closeListeners.push(listener);
  }

  /** DELETE the session (405 is fine), then end every stream. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.end('closed');
    if (this.client.sessionId === undefined) return;
    try {
      const res = await this.client.delete(AbortSignal.timeout(5_000));
      await res.discard();
      if (!res.ok && res.status !== 405) this.log.debug('upstream.session.delete_refused', { status: res.status });
    } catch (err) {
      this.log.debug('upstream.session.delete_failed', { error: err });
    }
  }

  /** Routes one message from any stream; `call` is the POST it arrived on, if any. */
  private dispatch(msg: unknown, call: PendingCall | undefined): void {
    if (isResponse(msg)) {
      // Responses may also come on a resumed stream, so match by wire id.
      const owner = typeof msg.id === 'number' ? this.pending.get(msg.id) : undefined;
      if (owner) owner.settle(outcomeOf(msg));
      else this.log.debug('upstream.response.unmatched', { id: msg.id });
    } else if (isRequest(msg)) {
      this.answer(msg, call);
    } else if (isNotification(msg)) {
      this.deliver(msg, call);
    } else {
      this.log.warn('upstream.message.invalid', { detail: 'not a JSON-RPC message' });
    }
  }

  private deliver(n: JSONRPCNotification, call: PendingCall | undefined): void {
    if (n.method === 'notifications/progress') {
      const routed = this.progress.route(n, (id) => this.pending.get(id));
      if (!routed) this.log.debug('upstream.progress.unmatched');
      return;
    }
    if (n.method === 'notifications/cancelled') {
      const rid = (n.params as { requestId?: RequestId } | undefined)?.requestId;
      const entry = rid === undefined ? undefined : this.inbound.get(rid);
      if (entry) entry.cancelled = true;
    }
    if (call?.handlers.onNotification && !call.settled) call.handlers.onNotification(n);
    else if (this.unsolicited) this.unsolicited.notification(n);
    // Before the pool takes the session (the `initialized` POST may be answered after the GET stream spoke): kept, bounded.
    else if (this.early.length < EARLY_NOTIFICATIONS_MAX) this.early.push(n);
  }

  /** ping locally; else the call's handler, then the unsolicited one (digest §5.3 A.9). */
  private answer(req: JSONRPCRequest, call: PendingCall | undefined): void {
    const handler = this.handlerFor(req, call);
    let pending: Promise<Record<string, unknown>> | undefined;
    try {
      pending = handler?.(req);
    } catch (err) {
      pending = Promise.reject(err);
    }
    void this.reply(req.id, req.method, pending);
  }

  /**
   * Sends the answer once the handler has it. Only the id is kept meanwhile: a
   * parked MRTR call's server request can wait for minutes, and its parsed
   * params (an elicitation schema) are the handler's to keep or not.
   */
  private async reply(id: RequestId, method: string, pending: Promise<Record<string, unknown>> | undefined): Promise<void> {
    let outcome: RpcOutcome;
    const entry = { cancelled: false };
    this.inbound.set(id, entry);
    if (!pending) {
      outcome = { error: { code: RpcCode.MethodNotFound, message: `no handler for server request ${method}` } };
    } else {
      try {
        outcome = { result: await pending };
      } catch (err) {
        outcome = { error: toRpcErrorBody(err) };
      }
    }
    this.inbound.delete(id);
    if (entry.cancelled || this.closed) return;
    await this.exchange.send(responseFor(id, outcome)).catch((err) => this.log.debug('upstream.response.post_failed', { error: err }));
  }

  private handlerFor(req: JSONRPCRequest, call: PendingCall | undefined): ((r: JSONRPCRequest) => Promise<Record<string, unknown>>) | undefined {
    if (req.method === 'ping') return async () => ({});
    const own = call?.handlers;
    if (own?.onServerRequest) return (r) => own.onServerRequest!(r);
    const unsolicited = this.unsolicited;
    if (unsolicited) return (r) => unsolicited.request(r);
    return undefined;
  }

  private cancel(call: PendingCall, reason: string, bridgeCode?: BridgeErrorCode): void {
    if (call.settled) return;
    call.settle(internal(reason, bridgeCode));
    call.ac.abort();
    if (!this.closed) void this.notify('notifications/cancelled', { requestId: call.id, reason }).catch(() => undefined);
  }

  /** Ends the session once: every pending call resolves with an error, listeners hear why. */
  private end(reason: string): void {
    if (this.endReason !== undefined) return;
    this.endReason = reason;
    this.log.debug('upstream.session.end', { reason });
    this.getStream?.stop();
    this.deadlines.stop();
    for (const call of [...this.pending.values()]) {
      call.settle(internal(`upstream session ended (${reason}) during ${call.method}`, 'BRIDGE_ERR_UPSTREAM_CLOSED'));
      call.ac.abort();
    }
    for (const l of this.closeListeners.splice(0)) l(reason);
  }
}

/** A local failure as an outcome; `data.bridgeCode` says which (the same shape pipe sessions use). */
function internal(message: string, bridgeCode?: BridgeErrorCode): RpcOutcome {
  return { error: { code: RpcCode.InternalError, message, ...(bridgeCode ? { data: { bridgeCode } } : {}) } };
}
