import { SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import type { CallHandlers, LegacyLink, LegacyUpstreamSession, ModernLink, OutboundRequest } from '../contracts/upstream.js';
import type { RpcOutcome } from '../jsonrpc/messages.js';
import type { RequestMetrics } from './bridge-metrics.js';
import { methodLabel } from './method-label.js';
import { TRACE_CONTEXT, contextOf, injectInto, runIn, type Span, type Tracing } from './tracing.js';

type Call = (req: OutboundRequest, handlers?: CallHandlers) => Promise<RpcOutcome>;

/**
 * Observes every call a bridge sends upstream: its duration, MRTR rounds a
 * modern server asks for, and with tracing one CLIENT span per exchange whose
 * context goes upstream in `params._meta.traceparent` (and, on HTTP, in the
 * `traceparent` header: `links/upstream-http.ts` adds it when the link sends
 * the exchange synchronously inside `runIn`). The parent is the client
 * request's span, carried on `params` (tracing.ts). The link's own `call` is replaced on the instance, so the pool,
 * `instanceof` checks and every other member stay as they are.
 */
export function observeLink(link: ModernLink | LegacyLink, upstreamEpoch: string, metrics: RequestMetrics | undefined, tracing: Tracing | undefined, server?: string): void {
  if (!metrics && !tracing) return;
  if ('call' in link) {
    link.call = observedCall(link.call.bind(link), upstreamEpoch, metrics, tracing, server);
    return;
  }
  const open = link.openSession.bind(link);
  link.openSession = async (init) => {
    const session: LegacyUpstreamSession = await open(init);
    session.call = observedCall(session.call.bind(session), upstreamEpoch, metrics, tracing, server);
    return session;
  };
}

function observedCall(call: Call, upstreamEpoch: string, metrics: RequestMetrics | undefined, tracing: Tracing | undefined, server: string | undefined): Call {
  return (req, handlers) => {
    const started = performance.now();
    const method = methodLabel(req.method);
    let answer: Promise<RpcOutcome>;
    let span: Span | undefined;
    if (tracing) {
      const parent = contextOf(req.params);
      // A retry carrying inputResponses is one more MRTR round of the same call (digest §1.6).
      const round = (req.params as { inputResponses?: unknown } | undefined)?.inputResponses !== undefined;
      // Attributes after the start, as in observed-handlers.ts (the SDK sanitizes an options object twice).
      const opened = tracing.tracer.startSpan(`upstream ${method}`, { kind: SpanKind.CLIENT }, parent);
      // A span the sampler left out records nothing, but its context still goes upstream (sampled flag off).
      if (opened.isRecording()) {
        span = opened;
        span.setAttribute('mcp.method.name', req.method);
        span.setAttribute('mcp.bridge.upstream_epoch', upstreamEpoch);
        if (server !== undefined) span.setAttribute('mcp.bridge.server', server);
        if (round) span.setAttribute('mcp.bridge.mrtr_retry', true);
      }
      const ctx = trace.setSpan(parent, opened);
      answer = runIn(ctx, () => call(withTraceMeta(req, ctx), handlers));
    } else {
      answer = call(req, handlers);
    }
    answer.then(
      (outcome) => {
        metrics?.upstream(method, (performance.now() - started) / 1000);
        const inputRequired = 'result' in outcome && outcome.result.resultType === 'input_required';
        if (inputRequired) metrics?.mrtrRound('upstream');
        if (span) {
          if ('error' in outcome) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.message });
          else if (inputRequired) span.setAttribute('mcp.bridge.result_type', 'input_required');
          span.end();
        }
      },
      () => span?.end(),
    );
    return answer;
  };
}

/**
 * The request with the exchange's trace context in `params._meta` (reserved
 * `traceparent`/`tracestate` keys, digest §1). The client's own bytes (`text`)
 * no longer match, so the link serializes the request again.
 */
function withTraceMeta(req: OutboundRequest, ctx: Context): OutboundRequest {
  const params = req.params ?? {};
  // Copied key by key, leaving out the client's own trace keys: `delete` would turn the object into a
  // dictionary, slower to fill and for the link to serialize.
  const meta: Record<string, unknown> = {};
  const from = params._meta as Record<string, unknown> | undefined;
  if (from) for (const k in from) if (k !== 'traceparent' && k !== 'tracestate') meta[k] = from[k];
  injectInto(meta, ctx);
  if (meta.traceparent === undefined) return req;
  const out: Record<PropertyKey, unknown> = { ...params, _meta: meta };
  out[TRACE_CONTEXT] = ctx;
  return { method: req.method, id: req.id, params: out as Record<string, unknown> };
}
