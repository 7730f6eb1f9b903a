import { randomUUID } from 'node:crypto';
import type { InitializeResult, JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, RequestId } from '@modelcontextprotocol/server';
import type { CallHandlers, LegacyUpstreamSession, OutboundRequest, UnsolicitedHandlers, UpstreamInit } from '../contracts/upstream.js';
import { BridgeError, RpcError, toRpcErrorBody, type BridgeErrorCode } from '../errors.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import {
  errorResponse,
  isErrorResponse,
  isNotification,
  isRequest,
  isResultResponse,
  notification,
  outcomeOf,
  resultResponse,
  type RpcErrorBody,
  type RpcOutcome,
} from '../jsonrpc/messages.js';
import type { Logger } from '../log.js';
import type { MessagePipe } from './message-pipe.js';
import { PendingCalls, type PendingCall } from './pending-calls.js';
import { IdTable } from '../heap/id-table.js';

/** How a pipe session behaves. */
export interface PipeSessionOptions {
  logger: Logger;
  /** Default deadline of every call (and of initialize) when the call sets none. */
  callTimeoutMs?: number;
  kind: 'stdio' | 'http+sse' | 'ws';
}

type Obj = Record<string, unknown>;

/** A silent server must not hold openSession forever when no call timeout is configured. */
const INITIALIZE_TIMEOUT_MS = 60_000;

/**
 * Sends initialize with `init`, waits for the result, sends notifications/initialized
 * (digest §4.1). Rejects (RpcError or BridgeError) if the server refuses or the pipe
 * closes; on failure the pipe is closed, since nothing else owns it.
 */
export async function openPipeSession(pipe: MessagePipe, init: UpstreamInit, opts: PipeSessionOptions): Promise<LegacyUpstreamSession> {
  const session = new PipeSession(pipe, init, opts);
  try {
    await session.initialize();
    return session;
  } catch (err) {
    await session.close();
    throw err;
  }
}

/**
 * A legacy session over a pipe that carries nothing linking a server request to
 * the call that caused it (stdio, http+sse, WebSocket), so `correlates` is false.
 * `call()` always resolves with an RpcOutcome (server errors, timeouts,
 * cancellation and a dead pipe all arrive as `{error}`) and never rejects.
 */
class PipeSession implements LegacyUpstreamSession {
  readonly id = randomUUID();
  readonly correlates = false;
  initializeResult!: InitializeResult;
  private readonly log: Logger;
  private readonly calls: PendingCalls;
  private unsolicited: UnsolicitedHandlers | undefined;
  /** Server requests being answered, by wire id: cancelled ones get no late response. */
  private readonly inbound = new IdTable<string, { cancelled: boolean; call?: PendingCall }>();
  private closeReason: string | undefined;
  private readonly closeListeners: Array<(reason: string) => void> = [];

  constructor(
    private readonly pipe: MessagePipe,
    readonly init: UpstreamInit,
    private readonly opts: PipeSessionOptions,
  ) {
    this.log = opts.logger.child({ upstream: opts.kind, session: this.id });
    this.calls = new PendingCalls((m) => this.write(m));
    pipe.onMessage((m) => this.receive(m));
    pipe.onClose((reason) => this.finish(reason));
  }

  /** True once the pipe ended, or can take nothing more (a child that exited while its stdout drains). */
  get closed(): boolean {
    return this.closeReason !== undefined || this.pipe.writable === false;
  }

  /** digest §4.1: initialize (never cancelled), then notifications/initialized. */
  async initialize(): Promise<void> {
    const params = { protocolVersion: this.init.protocolVersion, capabilities: this.init.capabilities, clientInfo: this.init.clientInfo };
    const outcome = await this.send({ method: 'initialize', params }, {}, false, this.opts.callTimeoutMs ?? INITIALIZE_TIMEOUT_MS);
    if ('error' in outcome) {
      // Local failures carry data.bridgeCode (see PendingCalls); anything else is the server's refusal.
      const code = (outcome.error.data as Obj | undefined)?.bridgeCode as BridgeErrorCode | undefined;
      if (code) throw new BridgeError(code, `upstream ${this.opts.kind} initialize failed: ${outcome.error.message}`);
      throw RpcError.from(outcome.error);
    }
    const result = outcome.result;
    if (typeof result.protocolVersion !== 'string' || typeof result.capabilities !== 'object' || result.capabilities === null) {
      throw new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', `upstream ${this.opts.kind} server answered initialize without protocolVersion/capabilities`);
    }
    this.initializeResult = result as unknown as InitializeResult;
    await this.write(notification('notifications/initialized'));
    this.log.info('upstream.initialized', {
      requested: this.init.protocolVersion,
      protocolVersion: result.protocolVersion,
      serverInfo: result.serverInfo,
    });
  }

  /** Resolves with the call's outcome; never rejects (see the class comment). */
  call(req: OutboundRequest, handlers: CallHandlers = {}): Promise<RpcOutcome> {
    return this.send(req, handlers, true, handlers.timeoutMs ?? this.opts.callTimeoutMs);
  }

  /** Rejects with a BridgeError when the session is closed or the write fails. */
  async notify(method: string, params?: Obj): Promise<void> {
    if (this.closeReason !== undefined) throw this.closedError();
    await this.write(notification(method, params));
  }

  setUnsolicitedHandlers(h: UnsolicitedHandlers | undefined): void {
    this.unsolicited = h;
  }

  onClose(listener: (reason: string) => void): void {
    if (this.closeReason !== undefined) {
      const reason = this.closeReason;
      queueMicrotask(() => listener(reason));
    } else this.closeListeners.push(listener);
  }

  async close(): Promise<void> {
    this.finish('closed by the bridge');
    await this.pipe.close();
  }

  private send(req: OutboundRequest, handlers: CallHandlers, cancellable: boolean, timeoutMs: number | undefined): Promise<RpcOutcome> {
    if (this.closeReason !== undefined) return Promise.resolve({ error: this.closedBody() });
    return this.calls.start(req, handlers, cancellable, timeoutMs);
  }

  private write(msg: JSONRPCMessage): Promise<void> {
    return this.pipe.send(msg);
  }

  // ─── inbound ──────────────────────────────────────────────────────────────

  private receive(msg: unknown): void {
    // digest §3: implementations MUST accept incoming batches (2025-03-26).
    if (Array.isArray(msg)) {
      for (const m of msg) this.receiveOne(m);
    } else this.receiveOne(msg);
  }

  private receiveOne(m: unknown): void {
    if (isResultResponse(m) || isErrorResponse(m)) {
      if (m.id === null || m.id === undefined) {
        this.log.warn('upstream.error_without_id', { error: (m as { error?: unknown }).error });
        return;
      }
      if (!this.calls.settle(m.id, outcomeOf(m))) this.log.debug('upstream.late_response', { id: m.id });
      return;
    }
    if (isRequest(m)) {
      void this.answerServerRequest(m);
      return;
    }
    if (isNotification(m)) {
      this.routeNotification(m);
      return;
    }
    this.log.warn('upstream.invalid_message', { message: stringifyJsonRpc(m).slice(0, 200) });
  }

  /** digest §5.3 case A items 8–9: ping locally; otherwise the one call that can take it, else unsolicited. */
  private async answerServerRequest(req: JSONRPCRequest): Promise<void> {
    if (req.method === 'ping') {
      await this.write(resultResponse(req.id, {})).catch(() => undefined);
      return;
    }
    const key = String(req.id);
    const owners = this.calls.withServerRequestHandler();
    const call = owners.length === 1 ? owners[0] : undefined;
    const entry: { cancelled: boolean; call?: PendingCall } = { cancelled: false, call };
    this.inbound.set(key, entry);
    let response: JSONRPCMessage;
    try {
      const result = call
        ? await call.handlers.onServerRequest!(req)
        : await this.unsolicitedRequest(req, owners.length);
      response = resultResponse(req.id, result);
    } catch (err) {
      response = errorResponse(req.id, toRpcErrorBody(err));
    } finally {
      this.inbound.delete(key);
    }
    // A server that cancelled its own request must not get a late answer (digest §5.5).
    if (entry.cancelled || this.closeReason !== undefined) return;
    await this.write(response).catch((err) => this.log.debug('upstream.response_write_failed', { id: req.id, error: err }));
  }

  private unsolicitedRequest(req: JSONRPCRequest, inFlight: number): Promise<Obj> {
    if (this.unsolicited) return this.unsolicited.request(req);
    if (inFlight > 1) {
      throw new RpcError(RpcCode.InternalError, `bridge cannot tell which of ${inFlight} in-flight requests ${req.method} belongs to`);
    }
    throw new RpcError(RpcCode.MethodNotFound, `bridge has no client to forward ${req.method} to (no request in flight)`);
  }

  private routeNotification(n: JSONRPCNotification): void {
    const params = (n.params ?? {}) as Obj;
    if (n.method === 'notifications/progress') {
      // Bridge-minted tokens mean nothing to anyone else: late progress is dropped.
      const routed = this.calls.progressFor(params.progressToken as RequestId);
      if (routed) routed.call.handlers.onNotification?.({ ...n, params: { ...params, progressToken: routed.original } } as JSONRPCNotification);
      else this.log.debug('upstream.progress_unrouted', { progressToken: params.progressToken });
      return;
    }
    if (n.method === 'notifications/cancelled' && params.requestId !== undefined) {
      const entry = this.inbound.get(String(params.requestId));
      if (entry) {
        entry.cancelled = true;
        // The owner may hold state for this server request (a parked MRTR key, digest §5.3 item 6).
        if (entry.call?.handlers.onNotification) {
          entry.call.handlers.onNotification(n);
          return;
        }
      }
    }
    this.unsolicited?.notification(n);
  }

  // ─── closing ──────────────────────────────────────────────────────────────

  private closedBody(): RpcErrorBody {
    return {
      code: RpcCode.InternalError,
      message: `upstream ${this.opts.kind} server exited/closed: ${this.closeReason ?? 'unknown reason'}`,
      data: { bridgeCode: 'BRIDGE_ERR_UPSTREAM_CLOSED' },
    };
  }

  private closedError(): BridgeError {
    return new BridgeError('BRIDGE_ERR_UPSTREAM_CLOSED', this.closedBody().message);
  }

  private finish(reason: string): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    this.log.info('upstream.session_closed', { reason, pending: this.calls.size });
    // Never hang: every pending call gets its answer now.
    this.calls.settleAll(this.closedBody());
    for (const l of this.closeListeners.splice(0)) l(reason);
  }
}
