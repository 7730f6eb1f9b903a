import { randomUUID } from 'node:crypto';
import type { Implementation, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import type { ModernHandler, ModernRequestContext, ParamHeaderSpec } from '../../src/contracts/downstream.js';
import type { CallHandlers, LegacyUpstreamSession, UpstreamFacts, UpstreamInit } from '../../src/contracts/upstream.js';
import { RpcError, toRpcErrorBody } from '../../src/errors.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import { errorResponse, responseFor, type RpcOutcome } from '../../src/jsonrpc/messages.js';
import { CancelScope } from '../../src/links/cancel-scope.js';
import type { SessionLease, SessionPool } from '../../src/links/session-pool.js';
import { principalInit } from '../shared/principal-init.js';
import type { Logger } from '../../src/log.js';
import { BRIDGE_IMPLEMENTATION } from '../../src/version.js';
import { clientCapabilitiesToLegacy, isEmbeddableInputMethod } from '../shared/capabilities-to-legacy.js';
import type { ListenBudget } from '../shared/listen-budget.js';
import { mayBeAsked } from '../shared/may-be-asked.js';
import { RequestStateCodec } from '../shared/request-state.js';
import { ToolHeaderRegistry } from '../shared/tool-header-registry.js';
import { discoverFromInitialize, upstreamServerInfo } from './discover-from-initialize.js';
import { ListenRelay } from './listen-relay.js';
import { LOG_SLOT, LogRelay, type LogSubscriber } from './log-relay.js';
import { readEnvelope, upstreamParams, type ModernEnvelope } from './modern-envelope.js';
import { MrtrRounds } from './mrtr-rounds.js';
import { ProgressRelay } from './progress-relay.js';
import { shapeError, shapeResult } from './result-shaping.js';
import { undeclaredInput } from './undeclared-input.js';

/** How the daemon builds the modern-to-legacy bridge. */
export interface ModernToLegacyOptions {
  /** Every legacy upstream kind is reached through a SessionPool. */
  pool: SessionPool;
  /** What detection learned: the upstream's InitializeResult, capabilities, serverInfo, instructions. */
  facts: UpstreamFacts;
  logger: Logger;
  /** Active time a call may wait upstream (per MRTR leg; parked time does not count). */
  callTimeoutMs: number;
  /** How long a parked call waits for its retry. */
  requestStateTtlMs: number;
  /** HMAC key for requestState; random per start when absent. */
  requestStateKey?: string | Uint8Array;
  /** Names this instance inside requestState; random per start when absent. */
  instanceId?: string;
  /** Server requests arriving this close together form one round (default 10 ms). */
  gatherMs?: number;
  /** `--max-parked`: parked MRTR calls at most; absent: unbounded. */
  maxParkedCalls?: number;
  /** `--max-parked-per-principal`: one principal's share of the parked calls. */
  maxParkedPerPrincipal?: number;
  /** `--max-listens`: the daemon's bound on open listens; absent: unbounded. */
  listenBudget?: ListenBudget;
}

/** The 2026-07-28 methods (digest §1.5) and how each reaches a legacy server. */
type ModernMethod =
  | 'server/discover'
  | 'tools/list'
  | 'tools/call'
  | 'prompts/list'
  | 'prompts/get'
  | 'resources/list'
  | 'resources/templates/list'
  | 'resources/read'
  | 'completion/complete'
  | 'subscriptions/listen';

/** discover: answered locally; relay: one shared call; input: may return input_required; listen: a subscription. */
type Route = 'discover' | 'relay' | 'input' | 'listen';

interface MethodSpec {
  route: Route;
  /** Carries ttlMs + cacheScope (digest §1.6). */
  cacheable: boolean;
}

const METHODS: Record<ModernMethod, MethodSpec> = {
  'server/discover': { route: 'discover', cacheable: true },
  'tools/list': { route: 'relay', cacheable: true },
  'tools/call': { route: 'input', cacheable: false },
  'prompts/list': { route: 'relay', cacheable: true },
  'prompts/get': { route: 'input', cacheable: false },
  'resources/list': { route: 'relay', cacheable: true },
  'resources/templates/list': { route: 'relay', cacheable: true },
  'resources/read': { route: 'input', cacheable: true },
  'completion/complete': { route: 'relay', cacheable: false },
  'subscriptions/listen': { route: 'listen', cacheable: false },
};

interface Call {
  req: JSONRPCRequest;
  env: ModernEnvelope;
  ctx: ModernRequestContext;
  spec: MethodSpec;
  init: UpstreamInit;
}

type Obj = Record<string, unknown>;

/**
 * 2026-07-28 clients in front of a legacy server (digest §5, DESIGN
 * "modern-to-legacy"): discover from the InitializeResult, requests on pooled
 * upstream sessions opened with each request's own capabilities, server
 * requests turned into MRTR rounds, unsolicited notifications into listens.
 */
export class ModernToLegacyBridge implements ModernHandler {
  readonly #opts: ModernToLegacyOptions;
  readonly #log: Logger;
  readonly #serverInfo: Implementation;
  readonly #discover: Obj;
  readonly #logRelay: LogRelay;
  readonly #rounds: MrtrRounds;
  readonly #listens: ListenRelay;
  readonly #removeListener: () => void;
  readonly #routes: Record<Route, (c: Call) => Promise<RpcOutcome>>;
  /** `x-mcp-header` declarations seen in relayed `tools/list` results, for the face's `Mcp-Param-*` check (digest §2.5). */
  readonly #tools = new ToolHeaderRegistry();
  #closed = false;

  constructor(opts: ModernToLegacyOptions) {
    this.#opts = opts;
    this.#log = opts.logger.child({ bridge: 'modern-to-legacy' });
    this.#serverInfo = upstreamServerInfo(opts.facts);
    this.#discover = discoverFromInitialize(opts.facts);
    const serverCapabilities = (opts.facts.initialize?.capabilities ?? opts.facts.capabilities) as Obj;
    this.#logRelay = new LogRelay({ upstreamLogs: serverCapabilities.logging !== undefined, callTimeoutMs: opts.callTimeoutMs, logger: this.#log });
    const codec = new RequestStateCodec({ key: opts.requestStateKey, ttlMs: opts.requestStateTtlMs, instanceId: opts.instanceId ?? randomUUID() });
    this.#rounds = new MrtrRounds({
      pool: opts.pool,
      codec,
      logRelay: this.#logRelay,
      logger: this.#log,
      callTimeoutMs: opts.callTimeoutMs,
      gatherMs: opts.gatherMs ?? 10,
      serverInfo: this.#serverInfo,
      maxParked: opts.maxParkedCalls,
      maxParkedPerPrincipal: opts.maxParkedPerPrincipal,
    });
    this.#listens = new ListenRelay({
      pool: opts.pool,
      logRelay: this.#logRelay,
      serverCapabilities,
      serverInfo: this.#serverInfo,
      logger: this.#log,
      callTimeoutMs: opts.callTimeoutMs,
      budget: opts.listenBudget,
    });
    this.#routes = {
      discover: async () => ({ result: this.#discover }),
      relay: (c) => this.#relay(c),
      input: (c) => this.#rounds.run({ ...c, shape: (o) => this.#shape(c, o) }),
      listen: (c) => this.#listens.open(c.req, c.ctx, c.init),
    };
    this.#removeListener = opts.pool.addListener({
      notification: (session, n) => this.#unsolicitedNotification(session, n),
      request: (session, req) => this.#unsolicitedRequest(session, req),
    });
  }

  /** A legacy tool may carry `x-mcp-header` too: modern clients mirror it, so the face checks it (digest §2.6). */
  paramHeaders(toolName: string): ParamHeaderSpec[] | undefined {
    return this.#tools.specsFor(toolName);
  }

  /** Parked calls and open listens, for tests and stats. */
  stats(): { parked: number; listens: number } {
    return { parked: this.#rounds.parked, listens: this.#listens.size };
  }

  /** Never rejects. A reaction rather than an async frame: a listen keeps its request open for hours. */
  handle(req: JSONRPCRequest, ctx: ModernRequestContext): Promise<JSONRPCResponse> {
    const id = req.id;
    try {
      if (this.#closed) throw new RpcError(RpcCode.InternalError, 'mcp-bridge is shutting down');
      if (!Object.hasOwn(METHODS, req.method)) throw new RpcError(RpcCode.MethodNotFound, `Method not found: ${req.method}`);
      const spec = METHODS[req.method as ModernMethod];
      const env = readEnvelope(req);
      const init: UpstreamInit = {
        protocolVersion: this.#opts.facts.protocolVersion,
        capabilities: clientCapabilitiesToLegacy(env.clientCapabilities, this.#opts.facts.protocolVersion),
        // Legacy initialize requires a clientInfo; the bridge names itself when the request names none.
        clientInfo: env.clientInfo ?? BRIDGE_IMPLEMENTATION,
        ...principalInit(ctx.principal),
      };
      return this.#routes[routeFor(spec.route, init, env.params)]({ req, env, ctx, spec, init }).then(
        (outcome) => responseFor(id, outcome),
        (err: unknown) => errorResponse(id, toRpcErrorBody(err)),
      );
    } catch (err) {
      return Promise.resolve(errorResponse(id, toRpcErrorBody(err)));
    }
  }

  /** Ends open listens with their graceful result (digest §5.4 step 7); calls in flight run on. */
  drain(): void {
    this.#listens.close();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listens.close();
    this.#rounds.close('mcp-bridge is shutting down');
    this.#removeListener();
  }

  /**
   * One call on a shared lease. Its client declared nothing the server may ask
   * for (routeFor), so a server request that still reaches it is one the
   * request did not declare: the call ends -32021, as on the input route.
   */
  async #relay(c: Call): Promise<RpcOutcome> {
    // One cancel for the wait for a session and for the call: the face's cheap onCancel where it has one
    // (reading ctx.signal would build an AbortController per request, issue 17).
    const cancel = new CancelScope();
    const onCancel = (): void => cancel.abort(new Error('request cancelled by the client'));
    if (c.ctx.onCancel) c.ctx.onCancel(onCancel);
    else c.ctx.signal.addEventListener('abort', onCancel, { once: true });
    const stopListening = (): void => {
      if (!c.ctx.onCancel) c.ctx.signal.removeEventListener('abort', onCancel);
    };
    let lease: SessionLease;
    try {
      lease = await this.#opts.pool.acquire(c.init, { exclusive: false, signal: cancel });
    } catch (err) {
      stopListening();
      return this.#shape(c, { error: toRpcErrorBody(err) });
    }
    const session = lease.session;
    const progress = new ProgressRelay(c.env.progressToken);
    progress.attach({ notify: (n) => c.ctx.notify(n), progressToken: c.env.progressToken, logLevel: c.env.logLevel });
    const sub: LogSubscriber = { [LOG_SLOT]: -1, current: () => progress.leg };
    const untrack = this.#logRelay.track(session, sub);
    let undeclared: RpcOutcome | undefined;
    const onServerRequest = (sreq: JSONRPCRequest): Promise<Obj> => {
      if (!isEmbeddableInputMethod(sreq.method)) return Promise.reject(new RpcError(RpcCode.MethodNotFound, `the modern client cannot answer ${sreq.method}`));
      const refusal = undeclaredInput(sreq, c.req.method);
      this.#log.info('m2l.input_undeclared', { method: sreq.method, call: c.req.method, requiredCapabilities: refusal.requiredCapabilities });
      undeclared ??= refusal.outcome;
      // The server's request is answered first, then the call is cancelled upstream.
      setImmediate(() => cancel.abort(new Error('an input the modern request did not declare')));
      return Promise.reject(refusal.serverError);
    };
    const handlers: CallHandlers = {
      onNotification: (n) => {
        if (n.method === 'notifications/progress') progress.forward(n);
        else if (n.method === 'notifications/message') this.#logRelay.deliver(sub, n);
      },
      signal: cancel,
      timeoutMs: this.#opts.callTimeoutMs,
    };
    if (c.spec.route === 'input') handlers.onServerRequest = onServerRequest;
    try {
      await this.#logRelay.ensure(session, c.env.logLevel);
      const outcome = await session.call({ method: c.req.method, params: upstreamParams(c.env.params) }, handlers);
      if (undeclared) return undeclared;
      if (cancel.aborted) return { error: { code: RpcCode.RequestCancelled, message: 'request cancelled by the client' } };
      if (c.req.method === 'tools/list' && 'result' in outcome) this.#tools.learn(outcome.result.tools);
      return this.#shape(c, outcome);
    } finally {
      stopListening();
      progress.detach();
      untrack();
      lease.release();
    }
  }

  #shape(c: Call, outcome: RpcOutcome): RpcOutcome {
    if ('error' in outcome) return { error: shapeError(outcome.error, { method: c.req.method, params: c.env.params, requestedVersion: c.env.protocolVersion }) };
    return { result: shapeResult(outcome.result, { method: c.req.method, cacheable: c.spec.cacheable, serverInfo: this.#serverInfo }) };
  }

  #unsolicitedNotification(session: LegacyUpstreamSession, n: JSONRPCNotification): void {
    if (n.method === 'notifications/message') {
      this.#logRelay.deliverUnsolicited(session, n);
      return;
    }
    this.#listens.dispatch(session, n);
  }

  /**
   * A server request no call claimed. It goes to the one MRTR call live on
   * that session if there is exactly one; otherwise it is refused (-32601, so
   * another bridge sharing the pool may take it) and the server can ask again
   * during a call (digest §5.3 step 8: no modern channel exists for it).
   */
  async #unsolicitedRequest(session: LegacyUpstreamSession, req: JSONRPCRequest): Promise<Obj> {
    const call = this.#rounds.soleLiveCallOn(session);
    if (call) return call.adopt(req);
    this.#log.debug('m2l.unsolicited_request_refused', { method: req.method, session: session.id });
    throw new RpcError(RpcCode.MethodNotFound, `no modern request is in flight to carry ${req.method}; ask again during a tool call`);
  }
}

/**
 * The route a call takes. A call that may need input holds its upstream
 * session alone (MRTR rounds), unless its client declared no capability the
 * server could ask for and it is no retry of a round: nothing can be asked of
 * it then, so it shares a session like a list (bridges/shared/may-be-asked.ts)
 * and the headline load (bench row 3) is served by one child, not one per call.
 */
function routeFor(route: Route, init: UpstreamInit, params: Obj | undefined): Route {
  if (route !== 'input' || mayBeAsked(init.capabilities)) return route;
  return params?.requestState === undefined && params?.inputResponses === undefined ? 'relay' : route;
}
