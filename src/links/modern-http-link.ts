import type { JSONRPCRequest, RequestId } from '@modelcontextprotocol/server';
import type { CallHandlers, CallSignal, ModernLink, OutboundRequest, UpstreamAuth } from '../contracts/upstream.js';
import { LATEST_MODERN_VERSION } from '../epochs/versions.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { metaOf, request, type RpcOutcome } from '../jsonrpc/messages.js';
import type { Logger } from '../log.js';
import type { ParamHeaderSpec } from '../wire/param-headers.js';
import { encodeHeaderValue } from '../wire/header-value.js';
import { mcpNameFor } from '../wire/modern-headers.js';
import { postModernRequest } from './modern-http-exchange.js';
import { CancelScope } from './cancel-scope.js';
import { DeadlineTimer, type Deadlined } from './deadline-timer.js';
import { ToolHeaderCache } from './tool-header-cache.js';
import { UpstreamTarget } from './upstream-http.js';
import { LIVE_SLOT, LiveSet } from '../heap/live-set.js';

export interface ModernHttpLinkOptions {
  /** The server's MCP endpoint. */
  url: string;
  /** Extra headers on every POST (credentials, for instance); never logged. */
  headers: Record<string, string>;
  logger: Logger;
  /** Deadline of a call without its own `timeoutMs`; `subscriptions/listen` has none by default. */
  callTimeoutMs?: number;
  /** Bound on one line of an SSE reply (`--max-line`); absent: the SSE parser's default. */
  maxLineBytes?: number;
  /** OAuth toward the upstream (src/links/oauth/); absent: the static headers are all. */
  auth?: UpstreamAuth;
}

const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const DEFAULT_CALL_TIMEOUT_MS = 5 * 60_000;
/** Bound on `tools/list` pages read while refreshing the header cache. */
const MAX_TOOL_PAGES = 50;

type Obj = Record<string, unknown>;

/**
 * A ModernLink to a 2026-07-28 Streamable HTTP server: every call is one POST
 * carrying the standard and `Mcp-Param-*` headers (digest §2.2, §2.5, §5.8);
 * the reply is JSON or SSE. Stateless, so calls never wait on each other.
 */
export class ModernHttpLink implements ModernLink {
  readonly kind = 'http' as const;
  private readonly opts: ModernHttpLinkOptions;
  private readonly log: Logger;
  private readonly tools = new ToolHeaderCache();
  private readonly target: UpstreamTarget;
  /** The headers every POST carries before the per-call ones: the user's, then content type and accept, names lower case. */
  private readonly baseHeaders: Record<string, string>;
  private readonly live = new LiveSet<LiveCall>();
  /** One timer for every call's deadline, not a setTimeout per call (issue 7). */
  private readonly deadlines = new DeadlineTimer<LiveCall>(
    () => this.live,
    (call) => {
      this.log.warn('upstream.call.timeout', { id: call.id, method: call.method, timeoutMs: call.timeoutMs });
      call.abort(new Error(`upstream call ${call.method} timed out after ${call.timeoutMs} ms`));
    },
  );
  private refreshing: Promise<void> | undefined;
  private minted = 0;
  private closed = false;

  constructor(opts: ModernHttpLinkOptions) {
    this.opts = opts;
    this.log = opts.logger.child({ link: 'modern-http' });
    this.target = new UpstreamTarget(opts.url);
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers)) base[k.toLowerCase()] = v;
    base['content-type'] = 'application/json';
    base.accept = 'application/json, text/event-stream';
    this.baseHeaders = base;
  }

  /** Resolves with the call's outcome (never rejects). `req.id` is sent verbatim when given. */
  async call(req: OutboundRequest, handlers: CallHandlers = {}): Promise<RpcOutcome> {
    if (this.closed) return failure('the upstream link is closed');
    const body = request(req.id ?? this.mintId(), req.method, req.params);
    // The caller's own bytes are this very request only when it carried its id.
    const text = req.id === undefined ? undefined : req.text;
    // Awaited, not returned: an async function resolving with a promise costs two more turns (issue 17).
    if (req.method === 'tools/call') return await this.callTool(body, handlers, text, req.headers);
    const outcome = await this.send(body, handlers, {}, text, req.headers);
    if (req.method === 'tools/list' && 'result' in outcome) this.learn(outcome.result.tools);
    return outcome;
  }

  /** The valid `x-mcp-header` specs of a tool seen in a `tools/list` result, if any. */
  paramHeaders(toolName: string): ParamHeaderSpec[] | undefined {
    return this.tools.specsFor(toolName);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.live.snapshot()) c.abort(new Error('the upstream link closed'));
    this.live.clear();
    this.deadlines.stop();
  }

  /** tools/call needs the tool's header specs: learn them first when unknown, and once more on -32020 (digest §2.2 rule 7). */
  private async callTool(body: JSONRPCRequest, handlers: CallHandlers, text: string | undefined, caller?: Readonly<Record<string, string>>): Promise<RpcOutcome> {
    const params = (body.params ?? {}) as Obj;
    const name = typeof params.name === 'string' ? params.name : undefined;
    if (name !== undefined && !this.tools.has(name)) await this.refreshTools(params, handlers.signal, false, caller);
    const headers = () => (name === undefined ? {} : this.tools.headersFor(name, params.arguments));
    const first = await this.send(body, handlers, headers(), text, caller);
    if (!('error' in first) || first.error.code !== RpcCode.HeaderMismatch || handlers.signal?.aborted) return first;
    this.log.info('upstream.header-mismatch.retry', { id: body.id, tool: name, message: first.error.message });
    await this.refreshTools(params, handlers.signal, true, caller);
    return this.send(body, handlers, headers(), text, caller);
  }

  /** Reads every `tools/list` page with the call's envelope; concurrent refreshes share one run. */
  private refreshTools(callParams: Obj, signal: CallSignal | undefined, force = false, caller?: Readonly<Record<string, string>>): Promise<void> {
    if (this.refreshing && !force) return this.refreshing;
    const meta = { ...(metaOf({ params: callParams }) ?? {}) };
    // A progress token belongs to the caller's request alone (digest §1.9).
    delete meta.progressToken;
    const run = this.readAllTools(meta, signal, caller).finally(() => {
      if (this.refreshing === run) this.refreshing = undefined;
    });
    this.refreshing = run;
    return run;
  }

  private async readAllTools(meta: Obj, signal: CallSignal | undefined, caller?: Readonly<Record<string, string>>): Promise<void> {
    const pages: unknown[] = [];
    let cursor: unknown;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const params: Obj = { _meta: meta };
      if (cursor !== undefined) params.cursor = cursor;
      const outcome = await this.send(request(this.mintId(), 'tools/list', params), { signal }, {}, undefined, caller);
      if ('error' in outcome) {
        this.log.warn('upstream.tools-refresh.failed', { code: outcome.error.code, message: outcome.error.message });
        return;
      }
      pages.push(outcome.result.tools);
      cursor = outcome.result.nextCursor;
      if (typeof cursor !== 'string' || cursor === '') break;
    }
    this.tools.clear();
    for (const tools of pages) this.learn(tools);
  }

  private learn(tools: unknown): void {
    for (const bad of this.tools.record(tools)) {
      // A Streamable HTTP client must drop such a tool (digest §2.5); the bridge's tools/list does.
      this.log.warn('upstream.tool.invalid-x-mcp-header', { tool: bad.name, reason: bad.reason });
    }
  }

  /** `caller`: the client's own headers (`--auth pass-through`), after the configured ones, before the protocol's. */
  private async send(body: JSONRPCRequest, handlers: CallHandlers, paramHeaders: Record<string, string> = {}, text?: string, callerHeaders?: Readonly<Record<string, string>>): Promise<RpcOutcome> {
    if (this.closed) return failure('the upstream link is closed');
    const caller = handlers.signal;
    if (caller?.aborted) return failure(`upstream call ${body.method} cancelled`);
    // A listen lives until someone ends it, so it has no default deadline.
    const timeoutMs = handlers.timeoutMs ?? (body.method === 'subscriptions/listen' ? undefined : (this.opts.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS));
    const scope = new LiveCall(body.method, body.id, timeoutMs);
    const onAbort = () => scope.abort(new Error(`upstream call ${body.method} cancelled`));
    caller?.addEventListener('abort', onAbort, { once: true });
    this.live.add(scope);
    if (scope.deadline !== Infinity) this.deadlines.watch(scope);
    const started = this.log.level === 'debug' ? Date.now() : 0;
    try {
      const outcome = await postModernRequest({
        target: this.target,
        headers: this.headersFor(body, paramHeaders, callerHeaders),
        body,
        text,
        signal: scope,
        onNotification: handlers.onNotification,
        logger: this.log,
        maxLineBytes: this.opts.maxLineBytes,
        // A restarting upstream: reads, and anything that provably never left, are sent again (safe-retry.ts).
        retry: { logger: this.log },
        auth: this.opts.auth,
      });
      if (started !== 0) this.log.debug('upstream.call', { id: body.id, method: body.method, ms: Date.now() - started, ...('error' in outcome ? { code: outcome.error.code } : {}) });
      return outcome;
    } finally {
      caller?.removeEventListener('abort', onAbort);
      this.live.delete(scope);
    }
  }

  /** One header per name whatever the case the user wrote it in; protocol headers win (written lower case here, not lower-cased per call). */
  private headersFor(body: JSONRPCRequest, paramHeaders: Record<string, string>, caller?: Readonly<Record<string, string>>): Record<string, string> {
    const version = metaOf(body)?.[VERSION_KEY];
    // Object.assign, not a spread: a spread copy given more keys keeps them alive past a scavenge (upstream-http.ts, options).
    const out: Record<string, string> = Object.assign({}, this.baseHeaders);
    if (caller) for (const k in caller) out[k.toLowerCase()] = caller[k];
    // The standard headers of digest §2.5, as modernRequestHeaders writes them.
    out['mcp-protocol-version'] = typeof version === 'string' ? version : LATEST_MODERN_VERSION;
    out['mcp-method'] = body.method;
    const name = mcpNameFor(body.method, body.params as Obj | undefined);
    if (name !== undefined) out['mcp-name'] = encodeHeaderValue(name);
    for (const k in paramHeaders) out[k.toLowerCase()] = paramHeaders[k];
    return out;
  }

  private mintId(): RequestId {
    return `mcp-bridge-${++this.minted}`;
  }
}

function failure(message: string): RpcOutcome {
  return { error: { code: RpcCode.InternalError, message } };
}

/** Deadlines past setTimeout's range (about 24.8 days) are no deadline: the timer could not hold them. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** One call in flight: its cancel, and its deadline on the link's shared timer. */
class LiveCall extends CancelScope implements Deadlined {
  readonly deadline: number;
  [LIVE_SLOT] = -1;

  constructor(
    readonly method: string,
    readonly id: RequestId,
    readonly timeoutMs: number | undefined,
  ) {
    super();
    this.deadline = timeoutMs === undefined || timeoutMs > MAX_TIMER_MS ? Infinity : performance.now() + timeoutMs;
  }
}
