import { propagation, trace } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler } from '@opentelemetry/sdk-trace';
import { BRIDGE_VERSION } from '../version.js';
import type { Tracing } from './tracing.js';

// The OpenTelemetry SDK side of tracing, imported by `startTracing` only when
// the environment asks for traces (see tracing.ts).

/**
 * Installs the global provider and the W3C trace-context + baggage
 * propagator (`startTracing` in tracing.ts calls it once per process).
 *
 * No context manager is installed. On Node 20 AsyncLocalStorage runs a hook on
 * every promise the process creates, which cost as much as the spans
 * themselves in the bench (row 2). A request's context travels with its
 * `params` instead (`TRACE_CONTEXT`, below), and synchronously in `runIn`.
 */
export function installTracing(env: NodeJS.ProcessEnv): Tracing {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'mcp-bridge', 'service.version': BRIDGE_VERSION }),
    sampler: samplerFrom(env),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...batchOptions(env) })],
  });
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  trace.setGlobalTracerProvider(provider);
  return {
    tracer: trace.getTracer('mcp-bridge', BRIDGE_VERSION),
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
    },
  };
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
