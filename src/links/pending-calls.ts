import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';
import type { CallHandlers, OutboundRequest } from '../contracts/upstream.js';
import { BridgeError } from '../errors.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { notification, request, type RpcErrorBody, type RpcOutcome } from '../jsonrpc/messages.js';
import { DeadlineTimer, type Deadlined } from './deadline-timer.js';
import { IdTable } from '../heap/id-table.js';

/** One call in flight on a pipe session. */
export interface PendingCall {
  readonly wireId: number;
  readonly method: string;
  readonly handlers: CallHandlers;
  /** The caller's progressToken, restored on the way back. */
  readonly originalToken?: RequestId;
  readonly localToken?: string;
  settle(outcome: RpcOutcome): void;
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The in-flight calls of one pipe session: wire ids of its own (never the
 * caller's), progress tokens rewritten to session-unique ones, and deadlines and
 * aborts turned into `notifications/cancelled` upstream (digest §5.5).
 */
export class PendingCalls {
  private nextId = 1;
  private readonly byId = new IdTable<number, Call>();
  private readonly byToken = new IdTable<string, Call>();
  /** One timer for every deadline (a setTimeout per call cost a timer and a closure each). */
  private readonly deadlines = new DeadlineTimer<Call>(
    () => this.byId.values(),
    (call) => this.cancel(call, `timed out after ${call.timeoutMs} ms`, timeoutBody(call.method, call.timeoutMs)),
  );

  constructor(private readonly write: (m: JSONRPCMessage) => Promise<void>) {}

  get size(): number {
    return this.byId.size;
  }

  /**
   * Sends the request and resolves with its outcome, or with a -32603 error on
   * timeout, abort or a failed write. `cancellable` false (initialize, digest
   * §4.1) sends no notifications/cancelled. `timeoutMs` overrides `handlers.timeoutMs`.
   */
  start(req: OutboundRequest, handlers: CallHandlers, cancellable: boolean, timeoutMs = handlers.timeoutMs): Promise<RpcOutcome> {
    const { signal } = handlers;
    if (signal?.aborted) return Promise.resolve({ error: cancelledBody(req.method, signal.reason) });
    const wireId = this.nextId++;
    let params = req.params;
    let originalToken: RequestId | undefined;
    let localToken: string | undefined;
    const meta = isObj(params) ? params._meta : undefined;
    if (isObj(meta) && meta.progressToken !== undefined) {
      originalToken = meta.progressToken as RequestId;
      localToken = `bridge-progress-${wireId}`;
      params = { ...params, _meta: { ...meta, progressToken: localToken } };
    }
    return new Promise<RpcOutcome>((resolve) => {
      const call = new Call(this, wireId, req.method, handlers, cancellable, originalToken, localToken, resolve);
      this.byId.set(wireId, call);
      if (localToken !== undefined) this.byToken.set(localToken, call);
      // The call itself is the listener (handleEvent): no closure per call.
      signal?.addEventListener('abort', call, { once: true });
      if (timeoutMs !== undefined && timeoutMs > 0) {
        call.timeoutMs = timeoutMs;
        call.deadline = performance.now() + timeoutMs;
        this.deadlines.watch(call);
      }
      this.write(request(wireId, req.method, params)).catch((err: Error) =>
        call.settle({ error: { code: RpcCode.InternalError, message: `could not send ${req.method} upstream: ${err.message}`, data: { bridgeCode: err instanceof BridgeError ? err.code : 'BRIDGE_ERR_UPSTREAM_CLOSED' } } }),
      );
    });
  }

  /** Settles the call with this wire id; false when none is pending (late or unknown). */
  settle(id: RequestId, outcome: RpcOutcome): boolean {
    const call = this.byId.get(typeof id === 'number' ? id : wireIdOf(id));
    if (!call) return false;
    call.settle(outcome);
    return true;
  }

  /** Settles every pending call with the same error (the pipe closed). */
  settleAll(error: RpcErrorBody): void {
    for (const call of [...this.byId.values()]) call.settle({ error });
    this.deadlines.stop();
  }

  /** The calls in flight that can take a server→client request. */
  withServerRequestHandler(): PendingCall[] {
    return [...this.byId.values()].filter((c) => c.handlers.onServerRequest !== undefined);
  }

  /** The call a bridge-minted progress token belongs to, and the caller's own token. */
  progressFor(token: RequestId | undefined): { call: PendingCall; original: RequestId } | undefined {
    if (token === undefined) return undefined;
    const call = this.byToken.get(String(token));
    return call && call.originalToken !== undefined ? { call, original: call.originalToken } : undefined;
  }

  /** @internal Called by a call as it settles. */
  forget(call: Call): boolean {
    if (this.byId.get(call.wireId) !== call) return false;
    this.byId.delete(call.wireId);
    if (call.localToken !== undefined) this.byToken.delete(call.localToken);
    call.handlers.signal?.removeEventListener('abort', call);
    return true;
  }

  /** @internal Settles the call with `body` and, unless it is initialize, tells the server. */
  cancel(call: Call, reason: unknown, body: RpcErrorBody): void {
    if (this.byId.get(call.wireId) !== call) return;
    call.settle({ error: body });
    if (!call.cancellable) return;
    const params = { requestId: call.wireId, reason: reasonText(reason) };
    this.write(notification('notifications/cancelled', params)).catch(() => undefined);
  }
}

/** A call in flight; it is also the abort listener of its signal. */
class Call implements PendingCall, Deadlined {
  timeoutMs: number | undefined;
  deadline = Infinity;

  constructor(
    private readonly owner: PendingCalls,
    readonly wireId: number,
    readonly method: string,
    readonly handlers: CallHandlers,
    readonly cancellable: boolean,
    readonly originalToken: RequestId | undefined,
    readonly localToken: string | undefined,
    private readonly resolve: (outcome: RpcOutcome) => void,
  ) {}

  settle(outcome: RpcOutcome): void {
    if (this.owner.forget(this)) this.resolve(outcome);
  }

  handleEvent(): void {
    const reason: unknown = this.handlers.signal?.reason;
    this.owner.cancel(this, reason, cancelledBody(this.method, reason));
  }
}

/** The wire id a server echoed as a string ("5" for 5); NaN (no call) for anything else. */
function wireIdOf(id: string): number {
  const n = Number(id);
  return String(n) === id ? n : NaN;
}

function reasonText(reason: unknown): string {
  if (typeof reason === 'string') return reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason.message;
  return 'cancelled';
}

function timeoutBody(method: string, timeoutMs: number | undefined): RpcErrorBody {
  return { code: RpcCode.InternalError, message: `upstream ${method} timed out after ${timeoutMs} ms`, data: { bridgeCode: 'BRIDGE_ERR_TIMEOUT' } };
}

function cancelledBody(method: string, reason: unknown): RpcErrorBody {
  const why = reasonText(reason);
  return { code: RpcCode.InternalError, message: why === 'cancelled' ? `upstream ${method} cancelled` : `upstream ${method} cancelled: ${why}` };
}
