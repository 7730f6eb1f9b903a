import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';
import type { CallHandlers, OutboundRequest } from '../contracts/upstream.js';
import { BridgeError } from '../errors.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { notification, request, type RpcErrorBody, type RpcOutcome } from '../jsonrpc/messages.js';

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
  private readonly byId = new Map<string, PendingCall>();
  private readonly byToken = new Map<string, PendingCall>();

  constructor(private readonly write: (m: JSONRPCMessage) => Promise<void>) {}

  get size(): number {
    return this.byId.size;
  }

  /**
   * Sends the request and resolves with its outcome, or with a -32603 error on
   * timeout, abort or a failed write. `cancellable` false (initialize, digest
   * §4.1) sends no notifications/cancelled.
   */
  start(req: OutboundRequest, handlers: CallHandlers, cancellable: boolean): Promise<RpcOutcome> {
    const { signal, timeoutMs } = handlers;
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
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => this.cancel(call, cancellable, signal?.reason, cancelledBody(req.method, signal?.reason));
      const call: PendingCall = {
        wireId,
        method: req.method,
        handlers,
        originalToken,
        localToken,
        settle: (outcome) => {
          if (!this.byId.delete(String(wireId))) return;
          if (localToken !== undefined) this.byToken.delete(localToken);
          if (timer) clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(outcome);
        },
      };
      this.byId.set(String(wireId), call);
      if (localToken !== undefined) this.byToken.set(localToken, call);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined && timeoutMs > 0) {
        const body: RpcErrorBody = { code: RpcCode.InternalError, message: `upstream ${req.method} timed out after ${timeoutMs} ms`, data: { bridgeCode: 'BRIDGE_ERR_TIMEOUT' } };
        timer = setTimeout(() => this.cancel(call, cancellable, `timed out after ${timeoutMs} ms`, body), timeoutMs);
      }
      this.write(request(wireId, req.method, params)).catch((err: Error) =>
        call.settle({ error: { code: RpcCode.InternalError, message: `could not send ${req.method} upstream: ${err.message}`, data: { bridgeCode: err instanceof BridgeError ? err.code : 'BRIDGE_ERR_UPSTREAM_CLOSED' } } }),
      );
    });
  }

  /** Settles the call with this wire id; false when none is pending (late or unknown). */
  settle(id: RequestId, outcome: RpcOutcome): boolean {
    const call = this.byId.get(String(id));
    if (!call) return false;
    call.settle(outcome);
    return true;
  }

  /** Settles every pending call with the same error (the pipe closed). */
  settleAll(error: RpcErrorBody): void {
    for (const call of [...this.byId.values()]) call.settle({ error });
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

  private cancel(call: PendingCall, cancellable: boolean, reason: unknown, body: RpcErrorBody): void {
    if (!this.byId.has(String(call.wireId))) return;
    call.settle({ error: body });
    if (!cancellable) return;
    const params = { requestId: call.wireId, reason: reasonText(reason) };
    this.write(notification('notifications/cancelled', params)).catch(() => undefined);
  }
}

function reasonText(reason: unknown): string {
  if (typeof reason === 'string') return reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason.message;
  return 'cancelled';
}

function cancelledBody(method: string, reason: unknown): RpcErrorBody {
  const why = reasonText(reason);
  return { code: RpcCode.InternalError, message: why === 'cancelled' ? `upstream ${method} cancelled` : `upstream ${method} cancelled: ${why}` };
}
