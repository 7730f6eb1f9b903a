import type { JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import type { ModernHandler, ModernRequestContext, ParamHeaderSpec } from '../../src/contracts/downstream.js';
import type { ModernLink } from '../../src/contracts/upstream.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import { responseFor, type RpcOutcome } from '../../src/jsonrpc/messages.js';
import { toRpcErrorBody } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import { ToolHeaderRegistry } from './tool-header-registry.js';

/** What a modern-to-modern bridge needs. */
export interface ModernToModernOptions {
  link: ModernLink;
  logger: Logger;
  callTimeoutMs: number;
}

const LISTEN = 'subscriptions/listen';
const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';

type Result = Record<string, unknown>;

/**
 * Serves 2026-07-28 clients from a 2026-07-28 server: a stateless relay across
 * transports. Params and results pass untouched (`requestState` included, DESIGN
 * "Where parked calls live"); the only edit is dropping tools with invalid
 * `x-mcp-header` from `tools/list` for HTTP clients (digest §5.8).
 */
export class ModernToModernBridge implements ModernHandler {
  readonly #link: ModernLink;
  readonly #logger: Logger;
  readonly #timeoutMs: number;
  readonly #tools = new ToolHeaderRegistry();
  readonly #closing = new AbortController();

  constructor(opts: ModernToModernOptions) {
    this.#link = opts.link;
    this.#logger = opts.logger.child({ bridge: 'modern-to-modern' });
    this.#timeoutMs = opts.callTimeoutMs;
  }

  /** Relays one request with the client's id; never rejects. */
  async handle(req: JSONRPCRequest, ctx: ModernRequestContext): Promise<JSONRPCResponse> {
    if (this.#closing.signal.aborted) return responseFor(req.id, { error: { code: RpcCode.InternalError, message: 'the bridge is shutting down' } });
    const params = req.params as Result | undefined;
    // A listen lives as long as its stream; no call deadline applies (digest §1.8).
    const timeoutMs = req.method === LISTEN ? undefined : this.#timeoutMs;
    let outcome: RpcOutcome;
    try {
      outcome = await this.#link.call(params === undefined ? { method: req.method, id: req.id } : { method: req.method, params, id: req.id }, {
        signal: AbortSignal.any([ctx.signal, this.#closing.signal]),
        onNotification: (n) => ctx.notify(n),
        timeoutMs,
      });
    } catch (err) {
      outcome = { error: toRpcErrorBody(err) };
    }
    if (req.method === LISTEN && this.#closing.signal.aborted) {
      // Shutdown ends listens gracefully (digest §1.8 "Ending a subscription").
      outcome = { result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_KEY]: req.id } } };
    }
    if (req.method === 'tools/list' && 'result' in outcome) outcome = { result: this.#toolsList(outcome.result, ctx) };
    return responseFor(req.id, outcome);
  }

  /** The `x-mcp-header` declarations of a tool seen in a `tools/list` result (digest §2.5). */
  paramHeaders(toolName: string): ParamHeaderSpec[] | undefined {
    return this.#tools.specsFor(toolName);
  }

  /** Ends in-flight calls (listens with their graceful result); the link belongs to the daemon. */
  async close(): Promise<void> {
    this.#closing.abort();
  }

  /** Learns the page's header specs; HTTP clients must not see invalid tools (digest §2.5, §5.8). */
  #toolsList(result: Result, ctx: ModernRequestContext): Result {
    const invalid = this.#tools.learn(result.tools);
    if (invalid.length === 0 || ctx.transport !== 'http') return result;
    for (const t of invalid) this.#logger.warn('m2m.tool_dropped', { tool: t.name, reason: t.reason });
    const dropped = new Set(invalid.map((t) => t.name));
    const tools = (result.tools as unknown[]).filter((t) => !dropped.has((t as { name?: unknown }).name as string));
    return { ...result, tools };
  }
}
