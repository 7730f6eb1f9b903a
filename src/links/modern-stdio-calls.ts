import type { JSONRPCMessage, JSONRPCNotification, JSONRPCResponse, RequestId } from '@modelcontextprotocol/server';
import type { CallHandlers } from '../contracts/upstream.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { errorResponse, isErrorResponse, isNotification, isRequest, isResultResponse, metaOf, outcomeOf, type RpcOutcome } from '../jsonrpc/messages.js';
import type { Logger } from '../log.js';
import { ProgressTokens } from './progress-tokens.js';
import { IdTable } from '../heap/id-table.js';

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const LOG_LEVEL = 'io.modelcontextprotocol/logLevel';

type Obj = Record<string, unknown>;

/** One call in flight on the modern stdio channel. */
export interface ModernStdioCall {
  readonly wireId: number;
  /** The caller's id; listen subscription ids are mapped back to it. */
  readonly callerId: RequestId | undefined;
  readonly method: string;
  readonly handlers: CallHandlers;
  /** The request asked for `notifications/message` (digest §1.9 "Logging"). */
  readonly wantsLog: boolean;
  /** Which child it was written to, so a child's exit ends exactly its calls. */
  readonly generation: number;
  settled: boolean;
  settle(outcome: RpcOutcome): void;
}

/**
 * The in-flight table of a modern stdio link: wire ids of its own, demultiplexing
 * of one shared stdout (digest §3): responses by id, progress by token,
 * listen traffic by subscriptionId, logs to the one call that asked for them.
 */
export class ModernStdioCalls {
  private nextId = 1;
  private readonly byWire = new IdTable<number, ModernStdioCall>();
  readonly progress = new ProgressTokens();

  constructor(private readonly log: Logger) {}

  get size(): number {
    return this.byWire.size;
  }

  mintId(): number {
    return this.nextId++;
  }

  /** Registers a call; `resolve` gets its one outcome. Returns the call (already settled calls are removed). */
  add(init: Omit<ModernStdioCall, 'settled' | 'settle' | 'wantsLog'> & { params?: Obj }, resolve: (o: RpcOutcome) => void, cleanup: () => void): ModernStdioCall {
    const call: ModernStdioCall = {
      wireId: init.wireId,
      callerId: init.callerId,
      method: init.method,
      handlers: init.handlers,
      generation: init.generation,
      wantsLog: typeof metaOf({ params: init.params })?.[LOG_LEVEL] === 'string',
      settled: false,
      settle: (outcome) => {
        if (call.settled) return;
        call.settled = true;
        this.byWire.delete(call.wireId);
        this.progress.release(call.wireId);
        cleanup();
        resolve(outcome);
      },
    };
    this.byWire.set(call.wireId, call);
    return call;
  }

  get(wireId: number): ModernStdioCall | undefined {
    return this.byWire.get(wireId);
  }

  /** Ends every call written to `generation` (that child exited) with the same error. */
  settleGeneration(generation: number, message: string): void {
    for (const call of [...this.byWire.values()]) {
      if (call.generation === generation) call.settle({ error: { code: RpcCode.InternalError, message, data: { bridgeCode: 'BRIDGE_ERR_UPSTREAM_CLOSED' } } });
    }
  }

  settleAll(message: string): void {
    for (const call of [...this.byWire.values()]) call.settle({ error: { code: RpcCode.InternalError, message } });
  }

  /** Routes one parsed stdout value; returns a reply to write back, if one is owed. */
  route(msg: unknown): JSONRPCMessage | undefined {
    if (isResultResponse(msg) || isErrorResponse(msg)) {
      this.onResponse(msg as JSONRPCResponse);
      return undefined;
    }
    if (isRequest(msg)) {
      // A modern server MUST NOT send requests (digest §3); answer so it does not wait forever.
      this.log.warn('upstream.stdio.unexpected-request', { serverMethod: msg.method });
      return errorResponse(msg.id, { code: RpcCode.MethodNotFound, message: `mcp-bridge does not serve ${msg.method}: a 2026-07-28 server sends no requests` });
    }
    if (isNotification(msg)) this.onNotification(msg);
    else this.log.debug('upstream.stdio.unrecognised', {});
    return undefined;
  }

  private onResponse(msg: JSONRPCResponse): void {
    const call = typeof msg.id === 'number' ? this.byWire.get(msg.id) : undefined;
    if (!call) {
      this.log.debug('upstream.stdio.late-response', { id: msg.id });
      return;
    }
    const outcome = outcomeOf(msg);
    if ('result' in outcome && call.method === 'subscriptions/listen') outcome.result = this.withCallerSubscriptionId(outcome.result, call) as Obj;
    call.settle(outcome);
  }

  private onNotification(n: JSONRPCNotification): void {
    if (n.method === 'notifications/progress') {
      if (!this.progress.route(n, (id) => this.byWire.get(id as number))) this.log.debug('upstream.stdio.progress-dropped', {});
      return;
    }
    const subscription = metaOf(n)?.[SUBSCRIPTION_ID];
    if (subscription !== undefined) {
      const call = typeof subscription === 'number' ? this.byWire.get(subscription) : undefined;
      if (call) call.handlers.onNotification?.({ ...n, params: this.withCallerSubscriptionId(n.params as Obj, call) } as JSONRPCNotification);
      else this.log.debug('upstream.stdio.orphan-subscription', { method: n.method, subscription });
      return;
    }
    if (n.method === 'notifications/cancelled') {
      // A server ends a listen this way on stdio (digest §1.8, §7.1): treat it as the graceful end.
      const id = (n.params as Obj | undefined)?.requestId;
      const call = typeof id === 'number' ? this.byWire.get(id) : undefined;
      if (call?.method === 'subscriptions/listen') {
        call.settle({ result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID]: call.callerId ?? call.wireId } } });
      }
      return;
    }
    if (n.method === 'notifications/message') {
      // stdio carries no stream per request: deliver only when exactly one live call asked for logs.
      const askers = [...this.byWire.values()].filter((c) => c.wantsLog);
      if (askers.length === 1) askers[0]!.handlers.onNotification?.(n);
      else this.log.debug('upstream.stdio.log-dropped', { askers: askers.length });
      return;
    }
    this.log.debug('upstream.stdio.notification-dropped', { method: n.method });
  }

  /** Rewrites `_meta[subscriptionId]` from the wire id to the caller's id (when the caller gave one). */
  private withCallerSubscriptionId(params: Obj | undefined, call: ModernStdioCall): Obj {
    const meta = (params?._meta ?? {}) as Obj;
    if (call.callerId === undefined) return params ?? {};
    return { ...params, _meta: { ...meta, [SUBSCRIPTION_ID]: call.callerId } };
  }
}
