import type { JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import type { ModernHandler, ModernRequestContext, ParamHeaderSpec } from '../../src/contracts/downstream.js';
import type { CallSignal, ModernLink, OutboundRequest } from '../../src/contracts/upstream.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import { responseFor, type RpcOutcome } from '../../src/jsonrpc/messages.js';
import { keepVerbatim, requestText } from '../../src/jsonrpc/verbatim.js';
import { toRpcErrorBody } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import { CancelScope } from '../../src/links/cancel-scope.js';
import { linkedSignal } from '../../src/links/linked-signal.js';
import { LISTEN_LIMIT_MESSAGE, type ListenBudget } from '../shared/listen-budget.js';
import { ToolHeaderRegistry } from './tool-header-registry.js';

/** What a modern-to-modern bridge needs. */
export interface ModernToModernOptions {
  link: ModernLink;
  logger: Logger;
  callTimeoutMs: number;
  /** `--max-listens`: the daemon's bound on open listens, shared with legacy-to-modern; absent: unbounded. */
  listenBudget?: ListenBudget;
}

const LISTEN = 'subscriptions/listen';
const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';

type Result = Record<string, unknown>;

/**
 * Serves 2026-07-28 clients from a 2026-07-28 server: a stateless relay across
 * transports. Params and results pass untouched (`requestState` included, DESIGN
 * "Where parked calls live"); the only edits are a `resultType: "complete"`
 * where the upstream left it out (digest §1.6), and dropping tools with invalid
 * `x-mcp-header` from `tools/list` for HTTP clients (digest §5.8).
 */
export class ModernToModernBridge implements ModernHandler {
  readonly #link: ModernLink;
  readonly #logger: Logger;
  readonly #timeoutMs: number;
  readonly #listenBudget: ListenBudget | undefined;
  readonly #tools = new ToolHeaderRegistry();
  readonly #closing = new AbortController();
  /** Aborted by drain(): only listens end, with their graceful result. */
  readonly #draining = new AbortController();

  constructor(opts: ModernToModernOptions) {
    this.#link = opts.link;
    this.#logger = opts.logger.child({ bridge: 'modern-to-modern' });
    this.#timeoutMs = opts.callTimeoutMs;
    this.#listenBudget = opts.listenBudget;
  }

  /** Relays one request with the client's id; never rejects. */
  async handle(req: JSONRPCRequest, ctx: ModernRequestContext): Promise<JSONRPCResponse> {
    if (this.#closing.signal.aborted) return responseFor(req.id, { error: { code: RpcCode.InternalError, message: 'the bridge is shutting down' } });
    const params = req.params as Result | undefined;
    // A listen lives as long as its stream; no call deadline applies (digest §1.8).
    const timeoutMs = req.method === LISTEN ? undefined : this.#timeoutMs;
    const release = req.method === LISTEN && this.#listenBudget ? this.#listenBudget.take() : () => undefined;
    if (!release) {
      this.#logger.warn('m2m.listen_limit', { id: req.id, maxListens: this.#listenBudget?.max });
      return responseFor(req.id, { error: { code: RpcCode.InternalError, message: LISTEN_LIMIT_MESSAGE } });
    }
    let outcome: RpcOutcome;
    // Other calls end with the request (ctx.signal): at shutdown the face aborts them and the daemon closes the
    // link; linking the bridge's own signals per call would cost two listeners on every relayed request.
    const linked = req.method === LISTEN ? linkedSignal([ctx.signal, this.#closing.signal, this.#draining.signal]) : { signal: callSignal(ctx), dispose: noop };
    try {
      const text = requestText(req);
      const headers = ctx.principal?.upstreamHeaders; // --auth pass-through: the client's own token goes upstream
      // Members set one by one: a conditional spread costs a runtime copy per call (issue 17).
      const call: OutboundRequest = { method: req.method, id: req.id };
      if (params !== undefined) call.params = params;
      if (text !== undefined) call.text = text;
      if (headers !== undefined) call.headers = headers;
      outcome = await this.#link.call(call, {
        signal: linked.signal,
        onNotification: (n) => ctx.notify(n),
        timeoutMs,
      });
    } catch (err) {
      outcome = { error: toRpcErrorBody(err) };
    } finally {
      linked.dispose();
      release();
    }
    if (req.method === LISTEN && (this.#closing.signal.aborted || this.#draining.signal.aborted)) {
      // Shutdown ends listens gracefully (digest §1.8 "Ending a subscription").
      outcome = { result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_KEY]: req.id } } };
    }
    // digest §1.6: a client reads a missing resultType as "complete", and every result the bridge serves
    // MUST carry one, so a modern client never has to guess (the suite's sep-2322 client scenario).
    if ('result' in outcome && outcome.result.resultType === undefined) outcome = { result: { resultType: 'complete', ...outcome.result } };
    if (req.method === 'tools/list' && 'result' in outcome) {
      const shown = this.#toolsList(outcome.result, ctx);
      if (shown !== outcome.result) outcome = { result: shown };
    }
    // An outcome passed on unchanged keeps the upstream's bytes, so the face need not serialize it again.
    return keepVerbatim(outcome, responseFor(req.id, outcome));
  }

  /** The `x-mcp-header` declarations of a tool seen in a `tools/list` result (digest §2.5). */
  paramHeaders(toolName: string): ParamHeaderSpec[] | undefined {
    return this.#tools.specsFor(toolName);
  }

  /** Ends open listens with their graceful result; other calls in flight run on. */
  drain(): void {
    this.#draining.abort();
  }

  /** Ends open listens with their graceful result and refuses new calls; the link (and with it other calls in flight) belongs to the daemon. */
  async close(): Promise<void> {
    this.#closing.abort();
  }

  /** Learns the page's header specs; HTTP clients must not see invalid tools (digest §2.5, §5.8). */
  #toolsList(result: Result, ctx: ModernRequestContext): Result {
    const filtered = this.#tools.withoutInvalid(result);
    if (filtered.dropped.length === 0 || ctx.transport !== 'http') return result;
    for (const t of filtered.dropped) this.#logger.warn('m2m.tool_dropped', { tool: t.name, reason: t.reason });
    return filtered.result;
  }
}

function noop(): void {}

/** What cancels a relayed call: the face's cheap `onCancel` where it has one, else the request's signal. */
function callSignal(ctx: ModernRequestContext): CallSignal {
  if (!ctx.onCancel) return ctx.signal;
  const scope = new CancelScope();
  ctx.onCancel(() => scope.abort(new Error('the client cancelled the request')));
  return scope;
}
