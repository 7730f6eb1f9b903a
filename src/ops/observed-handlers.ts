import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import type { LegacyHandler, LegacyRequestContext, LegacySessionHandler, LegacySessionInfo, ModernHandler, ModernRequestContext } from '../contracts/downstream.js';
import type { Outcome, RequestMetrics, RequestRecorder } from './bridge-metrics.js';
import { KnownTools, methodLabel } from './method-label.js';
import { TRACE_CONTEXT, TRACE_HEADERS, extractParent, runIn, type Span, type Tracing } from './tracing.js';

/** What the observed handlers report to; either may be absent (then it costs nothing). */
export interface Observers {
  metrics?: RequestMetrics;
  tracing?: Tracing;
  /** The config-file name of the server (issue 14), as the `mcp.bridge.server` span attribute. */
  server?: string;
  /** The upstream's epoch, for labels and span attributes. */
  upstreamEpoch: string;
  /** Tool names the upstream listed: the only ones that become label values. */
  tools: KnownTools;
}

const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';

type Params = { name?: unknown; _meta?: Record<string, unknown> } | undefined;

function outcomeOf(res: JSONRPCResponse): Outcome {
  if ('error' in res) return 'error';
  return (res.result as { resultType?: unknown } | undefined)?.resultType === 'input_required' ? 'input_required' : 'ok';
}

/** Where a request's span and metrics come from: its face, epochs, protocol version and session. */
interface RequestSite {
  recorder: RequestRecorder | undefined;
  clientEpoch: string;
  face: string;
  protocolVersion?: string;
  sessionId?: string;
  headers?: Record<string, unknown>;
}

/**
 * Runs one client request under the observers: one SERVER span with the MCP
 * semantic attributes (parent from the client's `traceparent` header or
 * `params._meta.traceparent`), and its count and duration by face, epochs,
 * method, tool and outcome. Learns tool names from `tools/list` answers.
 */
function observe(o: Observers, site: RequestSite, req: JSONRPCRequest, run: () => Promise<JSONRPCResponse>): Promise<JSONRPCResponse> {
  const started = performance.now();
  const method = methodLabel(req.method);
  const params = req.params as Params;
  const tool = method === 'tools/call' ? o.tools.label(params?.name) : '';
  let answer: Promise<JSONRPCResponse>;
  const tracing = o.tracing;
  let span: Span | undefined;
  if (tracing) {
    const headers = site.headers ?? (params as { [TRACE_HEADERS]?: Record<string, unknown> } | undefined)?.[TRACE_HEADERS];
    const parent = extractParent(headers, params?._meta);
    // Attributes are set on the started span, not passed to startSpan: the SDK sanitizes an options
    // object twice before copying it in attribute by attribute (the bench's cost), and the samplers
    // offered (OTEL_TRACES_SAMPLER) do not read attributes.
    const opened = tracing.tracer.startSpan(tool ? `${method} ${tool}` : method, { kind: SpanKind.SERVER }, parent);
    // A span the sampler left out records nothing (its attributes and end would be dropped call by
    // call), but its context still goes upstream, with the sampled flag off.
    if (opened.isRecording()) {
      span = opened;
      serverAttributes(span, o, site, req, params);
    }
    const ctx = trace.setSpan(parent, opened);
    // The context rides on params to the upstream call (tracing.ts TRACE_CONTEXT); a request without
    // params gets an empty object to carry it (its upstream call carries `_meta.traceparent` anyway).
    const carrier = (req.params ??= {}) as Record<PropertyKey, unknown>;
    carrier[TRACE_CONTEXT] = ctx;
    answer = runIn(ctx, run);
  } else {
    answer = run();
  }
  answer.then((res) => {
    const outcome = outcomeOf(res);
    if (req.method === 'tools/list' && outcome === 'ok') o.tools.learn((res as { result?: Record<string, unknown> }).result);
    if (outcome === 'input_required') o.metrics?.mrtrRound('downstream');
    site.recorder?.record(method, tool, outcome, (performance.now() - started) / 1000);
    if (span) {
      if ('error' in res) {
        const code = (res.error as { code?: number }).code;
        span.setAttribute('error.type', String(code));
        span.setAttribute('rpc.response.status_code', String(code));
        span.setStatus({ code: SpanStatusCode.ERROR, message: (res.error as { message?: string }).message });
      } else if (outcome === 'input_required') span.setAttribute('mcp.bridge.result_type', 'input_required');
      span.end();
    }
  }, () => span?.end());
  return answer;
}

/** The MCP semantic attributes of a client request's span (semantic conventions for MCP), set one by one. */
function serverAttributes(span: Span, o: Observers, site: RequestSite, req: JSONRPCRequest, params: Params): void {
  span.setAttribute('mcp.method.name', req.method);
  span.setAttribute('jsonrpc.request.id', String(req.id));
  span.setAttribute('mcp.bridge.face', site.face);
  span.setAttribute('mcp.bridge.client_epoch', site.clientEpoch);
  span.setAttribute('mcp.bridge.upstream_epoch', o.upstreamEpoch);
  if (o.server !== undefined) span.setAttribute('mcp.bridge.server', o.server);
  if (req.method === 'tools/call' && typeof params?.name === 'string') span.setAttribute('gen_ai.tool.name', params.name);
  if (site.protocolVersion) span.setAttribute('mcp.protocol.version', site.protocolVersion);
  if (site.sessionId) span.setAttribute('mcp.session.id', site.sessionId);
}

/** The modern handler, observed: one recorder per face (HTTP, stdio). */
export function observeModern(h: ModernHandler, o: Observers): ModernHandler {
  const recorders = { http: o.metrics?.recorder('http', 'modern'), stdio: o.metrics?.recorder('stdio', 'modern') };
  return {
    handle: (req: JSONRPCRequest, ctx: ModernRequestContext) => {
      if (!o.metrics && !o.tracing) return h.handle(req, ctx);
      const meta = (req.params as Params)?._meta;
      const version = meta?.[PROTOCOL_VERSION_META];
      const site: RequestSite = {
        recorder: recorders[ctx.transport],
        clientEpoch: 'modern',
        face: ctx.transport,
        protocolVersion: typeof version === 'string' ? version : undefined,
        headers: ctx.headers,
      };
      return observe(o, site, req, () => h.handle(req, ctx));
    },
    paramHeaders: h.paramHeaders ? (tool) => h.paramHeaders!(tool) : undefined,
    drain: h.drain ? () => h.drain!() : undefined,
    close: () => h.close(),
  };
}

/** The legacy handler, observed: each session's requests under a recorder for its transport and epoch. */
export function observeLegacy(h: LegacyHandler, o: Observers): LegacyHandler {
  const recorders = new Map<string, RequestRecorder | undefined>();
  const recorderFor = (info: Omit<LegacySessionInfo, 'protocolVersion'>) => {
    const key = info.transport;
    if (!recorders.has(key)) recorders.set(key, o.metrics?.recorder(key, key === 'http+sse' ? 'http+sse' : 'initialize'));
    return recorders.get(key);
  };
  return {
    openSession: async (params, info, channel) => {
      if (!o.metrics && !o.tracing) return h.openSession(params, info, channel);
      const recorder = recorderFor(info);
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      let opened: Awaited<ReturnType<LegacyHandler['openSession']>>;
      try {
        opened = await h.openSession(params, info, channel);
      } catch (err) {
        recorder?.record('initialize', '', 'error', seconds());
        throw err;
      }
      recorder?.record('initialize', '', 'ok', seconds());
      const site: RequestSite = {
        recorder,
        clientEpoch: info.transport === 'http+sse' ? 'http+sse' : 'initialize',
        face: info.transport,
        protocolVersion: opened.result.protocolVersion,
        sessionId: info.id,
      };
      return { result: opened.result, session: observeSession(opened.session, o, site) };
    },
    close: () => h.close(),
  };
}

function observeSession(s: LegacySessionHandler, o: Observers, site: RequestSite): LegacySessionHandler {
  return new ObservedSession(s, o, site);
}

/** A session whose requests are observed: a class, not three closures per idle session (issue 17). */
class ObservedSession implements LegacySessionHandler {
  constructor(
    private readonly inner: LegacySessionHandler,
    private readonly observers: Observers,
    private readonly site: RequestSite,
  ) {}

  handleRequest(req: JSONRPCRequest, ctx: LegacyRequestContext): Promise<JSONRPCResponse> {
    return observe(this.observers, this.site, req, () => this.inner.handleRequest(req, ctx));
  }

  handleNotification(n: JSONRPCNotification): void {
    this.inner.handleNotification(n);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
