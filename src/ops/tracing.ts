import { ROOT_CONTEXT, propagation, type Context, type Span, type TextMapGetter, type Tracer } from '@opentelemetry/api';

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
 * Starts tracing when the environment asks for it (`tracingRequested`), else
 * resolves with nothing. The OpenTelemetry SDK and its OTLP exporter are loaded
 * only then (`tracing-sdk.ts`): ~0.3 s of CPU at every start of a bridge that
 * exports no traces, as most stdio bridges a desktop client spawns do not.
 * Idempotent per process: the OpenTelemetry API is global by design.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<Tracing | undefined> {
  if (active || !tracingRequested(env)) return active;
  const { installTracing } = await import('./tracing-sdk.js');
  if (active) return active;
  const installed = installTracing(env);
  const tracing: Tracing = {
    tracer: installed.tracer,
    shutdown: async () => {
      await installed.shutdown();
      if (active === tracing) active = undefined;
    },
  };
  active = tracing;
  return tracing;
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
