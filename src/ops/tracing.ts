import { ROOT_CONTEXT, propagation, trace, type Context, type Span, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler } from '@opentelemetry/sdk-trace';
import { BRIDGE_VERSION } from '../version.js';

/**
 * OpenTelemetry tracing, on only when the SDK's standard variables ask for an
 * exporter (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
 * not `OTEL_SDK_DISABLED=true`). When off, no provider, context manager or
 * propagator is installed and the request path never calls into the API.
 * The exporter is OTLP/HTTP and reads the rest of the standard variables itself
 * (headers, timeout, protocol path); the batch processor reads `OTEL_BSP_*`.
 */
export interface Tracing {
  readonly tracer: Tracer;
  /** Flushes spans not exported yet and stops the exporter. */
  shutdown(): Promise<void>;
}

/** Whether the environment asks for traces. */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

let active: Tracing | undefined;

/** The running tracing, if any: links and handlers check it before doing any tracing work. */
export function activeTracing(): Tracing | undefined {
  return active;
}

/**
 * Installs the global provider and the W3C trace-context + baggage
 * propagator. Idempotent per process: the OpenTelemetry API is global by design.
 *
 * No context manager is installed. On Node 20 AsyncLocalStorage runs a hook on
 * every promise the process creates, which cost as much as the spans
 * themselves in the bench (row 2). A request's context travels with its
 * `params` instead (`TRACE_CONTEXT`, below), and synchronously in `runIn`.
 */
export function startTracing(env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  if (active || !tracingRequested(env)) return active;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'mcp-bridge', 'service.version': BRIDGE_VERSION }),
    sampler: samplerFrom(env),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...batchOptions(env) })],
  });
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  trace.setGlobalTracerProvider(provider);
  const tracing: Tracing = {
    tracer: trace.getTracer('mcp-bridge', BRIDGE_VERSION),
    shutdown: async () => {
      await provider.shutdown();
      if (active === tracing) active = undefined;
      trace.disable();
      propagation.disable();
    },
  };
  active = tracing;
  return tracing;
}

/**
 * `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG` as the SDK specification
 * defines them (this provider does not read them itself); default
 * `parentbased_always_on`. A span that is not sampled costs next to nothing.
 */
export function samplerFrom(env: NodeJS.ProcessEnv): Sampler {
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG);
  const ratio = Number.isFinite(arg) && arg >= 0 && arg <= 1 && env.OTEL_TRACES_SAMPLER_ARG?.trim() ? arg : 1;
  const byName: Record<string, () => Sampler> = {
    always_on: () => new AlwaysOnSampler(),
    always_off: () => new AlwaysOffSampler(),
    traceidratio: () => new TraceIdRatioBasedSampler(ratio),
    parentbased_always_on: () => new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    parentbased_always_off: () => new ParentBasedSampler({ root: new AlwaysOffSampler() }),
    parentbased_traceidratio: () => new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }),
  };
  return (byName[env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() ?? ''] ?? byName.parentbased_always_on)();
}

/** The SDK's standard `OTEL_BSP_*` variables, which this processor does not read itself. */
function batchOptions(env: NodeJS.ProcessEnv): { scheduledDelayMillis?: number; maxQueueSize?: number; maxExportBatchSize?: number; exportTimeoutMillis?: number } {
  const n = (v: string | undefined) => (v !== undefined && /^\d+$/.test(v.trim()) ? Number(v) : undefined);
  const out = {
    scheduledDelayMillis: n(env.OTEL_BSP_SCHEDULE_DELAY),
    maxQueueSize: n(env.OTEL_BSP_MAX_QUEUE_SIZE),
    maxExportBatchSize: n(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE),
    exportTimeoutMillis: n(env.OTEL_BSP_EXPORT_TIMEOUT),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}

/**
 * Where a client request's span context rides from the observed handler to the
 * observed link: an enumerable symbol key on the request's `params`. The
 * bridges derive upstream params from the client's by spread or rest, which
 * copy symbol keys; JSON never sees them. `modern-envelope.ts` carries it by hand.
 */
export const TRACE_CONTEXT: unique symbol = Symbol('mcp-bridge.traceContext');

/** The context of the code running synchronously inside `runIn` (the exchange being sent). */
let current: Context | undefined;

/** Runs `fn` with `ctx` as the synchronous current context (what `upstream-http.ts` injects into headers). */
export function runIn<T>(ctx: Context, fn: () => T): T {
  const previous = current;
  current = ctx;
  try {
    return fn();
  } finally {
    current = previous;
  }
}

/**
 * The client's `traceparent`/`tracestate` HTTP headers on a legacy Streamable
 * HTTP request, put on its params by the HTTP face (a legacy session's handler
 * sees the message, not the POST that carried it).
 */
export const TRACE_HEADERS: unique symbol = Symbol('mcp-bridge.traceHeaders');

/** Puts the trace headers of a POST on each request in its body (tracing on and a `traceparent` present only). */
export function attachTraceHeaders(body: unknown, headers: Record<string, string | string[] | undefined>): void {
  if (!active || typeof headers.traceparent !== 'string') return;
  const carried = { traceparent: headers.traceparent, ...(typeof headers.tracestate === 'string' ? { tracestate: headers.tracestate } : {}) };
  for (const m of Array.isArray(body) ? body : [body]) {
    // Requests only: a notification or response has no span of its own.
    if (typeof m !== 'object' || m === null || typeof (m as { method?: unknown }).method !== 'string' || !('id' in m)) continue;
    const msg = m as { params?: Record<PropertyKey, unknown> };
    (msg.params ??= {})[TRACE_HEADERS] = carried;
  }
}

/** The context set by the innermost `runIn` on the stack, if any. */
export function currentContext(): Context | undefined {
  return current;
}

/** The span context carried by `params` (see TRACE_CONTEXT), else the synchronous one, else ROOT. */
export function contextOf(params: unknown): Context {
  const carried = typeof params === 'object' && params !== null ? (params as { [TRACE_CONTEXT]?: Context })[TRACE_CONTEXT] : undefined;
  return carried ?? current ?? ROOT_CONTEXT;
}

/** Copies the carried context from one params object to another built key by key. */
export function carryTraceContext(from: object, to: Record<PropertyKey, unknown>): void {
  const carried = (from as { [TRACE_CONTEXT]?: Context })[TRACE_CONTEXT];
  if (carried !== undefined) to[TRACE_CONTEXT] = carried;
}

/** Reads `traceparent`/`tracestate`/`baggage` from a headers record or a `_meta` object alike. */
const RECORD_GETTER: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const v = carrier[key];
    return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined;
  },
};

/**
 * The parent context of a client request: the HTTP `traceparent` header when
 * present, else `params._meta.traceparent` (2026-07-28 carries W3C trace
 * context in `_meta`, digest §1 reserved keys); ROOT when neither is valid.
 */
export function extractParent(headers: Record<string, unknown> | undefined, meta: Record<string, unknown> | undefined): Context {
  const root = ROOT_CONTEXT;
  if (headers && typeof headers.traceparent === 'string') return propagation.extract(root, headers, RECORD_GETTER);
  if (meta && typeof meta.traceparent === 'string') return propagation.extract(root, meta, RECORD_GETTER);
  return root;
}

/** Writes the span context of `ctx` into `carrier` (HTTP headers or `_meta`), as `traceparent`/`tracestate`. */
export function injectInto(carrier: Record<string, unknown>, ctx: Context): void {
  propagation.inject(ctx, carrier);
}

export type { Span };
