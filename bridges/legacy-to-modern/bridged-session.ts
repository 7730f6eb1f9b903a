import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import type { LegacyRequestContext, LegacySessionHandler } from '../../src/contracts/downstream.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import { responseFor, type RpcOutcome } from '../../src/jsonrpc/messages.js';
import type { Logger } from '../../src/log.js';
import type { ToolHeaderRegistry } from '../shared/tool-header-registry.js';
import { runInputRounds, type InputRoundsOptions } from './input-rounds.js';
import type { ListenKeeper } from './listen-keeper.js';
import { isLoggingLevel, LOGGING_LEVELS, type SessionState } from './session-state.js';
import { LazyAbort } from '../../src/links/lazy-abort.js';
import { LiveSet } from '../../src/heap/live-set.js';

type Obj = Record<string, unknown>;

/** A legacy method the bridge answers itself, because 2026 removed it (digest §1.5, §5.4, §5.5). */
type LocalMethod = (s: BridgedSession, params: Obj) => Promise<RpcOutcome>;

function invalidParams(message: string): RpcOutcome {
  return { error: { code: RpcCode.InvalidParams, message } };
}

function uriOf(params: Obj): string | undefined {
  return typeof params.uri === 'string' && params.uri !== '' ? params.uri : undefined;
}

const LOCAL_METHODS: Record<string, LocalMethod> = {
  'logging/setLevel': async (s, params) => {
    if (!isLoggingLevel(params.level)) return invalidParams(`Invalid params: level must be one of ${LOGGING_LEVELS.join(', ')}`);
    s.state.logLevel = params.level;
    return { result: {} };
  },
  'resources/subscribe': (s, params) => s.changeSubscription(params, true),
  'resources/unsubscribe': (s, params) => s.changeSubscription(params, false),
  // A legacy client has no use for the modern notification channel; its own notifications come from the keeper.
  'subscriptions/listen': async () => ({ error: { code: RpcCode.MethodNotFound, message: 'Method not found: subscriptions/listen is not a legacy method' } }),
};

export interface BridgedSessionOptions extends InputRoundsOptions {
  state: SessionState;
  keeper: ListenKeeper;
  /** Whether the server honours `resourceSubscriptions` (discover `resources.subscribe`). */
  canSubscribe: boolean;
  /**
   * Set when the upstream is reached over Streamable HTTP: the bridge is then an
   * HTTP client and drops tools with an invalid `x-mcp-header` from `tools/list` (digest §2.5).
   */
  toolHeaders?: ToolHeaderRegistry;
}

/**
 * One downstream legacy session in front of a modern server: the removed
 * session methods are answered from the session's state, everything else runs
 * upstream through the MRTR loop, and closing ends its listen and its calls.
 */
export class BridgedSession implements LegacySessionHandler {
  readonly state: SessionState;
  private readonly opts: BridgedSessionOptions;
  private readonly log: Logger;
  private readonly abort = new AbortController();
  /** The cancels of the calls in flight, aborted by close(). */
  private readonly calls = new LiveSet<LazyAbort>();

  constructor(opts: BridgedSessionOptions) {
    this.opts = opts;
    this.state = opts.state;
    this.log = opts.logger;
  }

  async handleRequest(req: JSONRPCRequest, ctx: LegacyRequestContext): Promise<JSONRPCResponse> {
    if (this.abort.signal.aborted) return responseFor(req.id, { error: { code: RpcCode.InternalError, message: 'Session closed' } });
    const params = (req.params ?? {}) as Obj;
    const local = LOCAL_METHODS[req.method];
    if (local) return responseFor(req.id, await local(this, params));
    // One cancel for the call, ended by the request's own (the face's cheap form where it has one) or by the
    // session closing (close() aborts those in flight): an AbortSignal linked to both cost an AbortController
    // and an EventTarget listener on each per call, and kept the call alive past a scavenge (issue 17).
    const cancel = new LazyAbort();
    const source = ctx.cancel ?? ctx.signal;
    const onAbort = (): void => cancel.abort(source.reason);
    if (source.aborted) onAbort();
    else source.addEventListener('abort', onAbort, { once: true });
    this.calls.add(cancel);
    try {
      const outcome = await runInputRounds({ method: req.method, params: req.params as Obj | undefined, state: this.state, ctx, signal: cancel }, this.opts);
      return responseFor(req.id, req.method === 'tools/list' ? this.toolsList(outcome) : outcome);
    } finally {
      source.removeEventListener('abort', onAbort);
      this.calls.delete(cancel);
    }
  }

  /** digest §2.5: "A Streamable-HTTP client MUST reject an invalid tool definition by dropping that tool", with a warning. */
  private toolsList(outcome: RpcOutcome): RpcOutcome {
    const registry = this.opts.toolHeaders;
    if (!registry || !('result' in outcome)) return outcome;
    const filtered = registry.withoutInvalid(outcome.result);
    for (const t of filtered.dropped) this.log.warn('l2m.tool_dropped', { tool: t.name, reason: t.reason });
    return { result: filtered.result };
  }

  /** `notifications/roots/list_changed` has no 2026 equivalent (digest §5.4); nothing else is expected from a client. */
  handleNotification(n: JSONRPCNotification): void {
    this.log.debug('l2m.client_notification.dropped', { method: n.method });
  }

  async close(): Promise<void> {
    if (this.abort.signal.aborted) return;
    const reason = new Error('legacy session closed');
    this.abort.abort(reason);
    for (const call of this.calls.snapshot()) call.abort(reason);
    this.calls.clear();
    this.opts.keeper.close();
  }

  /**
   * Answers `resources/subscribe`/`unsubscribe` locally once a listen with the
   * new `resourceSubscriptions` is acknowledged upstream, so no update between
   * the answer and the new listen is lost (DESIGN "subscribe before answering").
   */
  async changeSubscription(params: Obj, subscribe: boolean): Promise<RpcOutcome> {
    const uri = uriOf(params);
    if (uri === undefined) return invalidParams('Invalid params: uri must be a non-empty string');
    if (!this.opts.canSubscribe) return { error: { code: RpcCode.MethodNotFound, message: 'Method not found: the server does not support resource subscriptions' } };
    if (subscribe) this.state.subscriptions.add(uri);
    else this.state.subscriptions.delete(uri);
    await this.opts.keeper.setResources(this.state.subscriptions);
    return { result: {} };
  }
}
