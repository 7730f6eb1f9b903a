import { context, propagation, trace, type Context, type Span, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
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
 * Installs the global provider, the AsyncLocalStorage context manager (so the
 * upstream exchange started inside a request's context finds its parent) and
 * the W3C trace-context + baggage propagator. Idempotent per process: the
 * OpenTelemetry API is global by design.
 */
export function startTracing(env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  if (active || !tracingRequested(env)) return active;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'mcp-bridge', 'service.version': BRIDGE_VERSION }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...batchOptions(env) })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  trace.setGlobalTracerProvider(provider);
  const tracing: Tracing = {
    tracer: trace.getTracer('mcp-bridge', BRIDGE_VERSION),
    shutdown: async () => {
      await provider.shutdown();
      if (active === tracing) active = undefined;
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
  active = tracing;
  return tracing;
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
  const root = context.active();
  if (headers && typeof headers.traceparent === 'string') return propagation.extract(root, headers, RECORD_GETTER);
  if (meta && typeof meta.traceparent === 'string') return propagation.extract(root, meta, RECORD_GETTER);
  return root;
}

/** Writes the active span's trace context into `carrier` (HTTP headers or `_meta`), as `traceparent`/`tracestate`. */
export function injectInto(carrier: Record<string, unknown>, ctx: Context = context.active()): void {
  propagation.inject(ctx, carrier);
}

export type { Span };
