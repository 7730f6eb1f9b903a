import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Why a request was refused before a bridge saw it; the `reason` label of `mcp_bridge_refused_total`. */
export type RefusalReason = 'auth' | 'origin' | 'host' | 'limits' | 'validation';

/** How a request ended: a result, a JSON-RPC error, or an MRTR `input_required` result. */
export type Outcome = 'ok' | 'error' | 'input_required';

/** What the gauges read at scrape time (the daemon's own counters; nothing is kept twice). */
export interface MetricSources {
  inflight(): number;
  /** Downstream legacy sessions per transport (`streamable-http`, `http+sse`, `ws`). */
  downstreamSessions(): Record<string, number>;
  /** Pooled upstream sessions and calls waiting for one; undefined when the upstream is modern. */
  pool(): { sessions: number; queued: number } | undefined;
  children(): number;
  /** Unrequested exits of stdio children so far (each one is respawned on demand). */
  childRestarts(): number;
  parked(): number;
  listens(): number;
}

/** Seconds; a relayed call on loopback takes well under a millisecond, a tool call may take minutes. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** One method (and tool) of one recorder: the label children, bound once. */
interface Bound {
  ok: Counter.Internal;
  error: Counter.Internal;
  input_required: Counter.Internal;
  seconds: Histogram.Internal<string>;
}

/**
 * Records the requests of one face and client epoch. The label children are
 * bound the first time a method/tool pair is seen and reused after, so a call
 * costs two map lookups, an increment and an observation (the bench measures it).
 */
export class RequestRecorder {
  private readonly byMethod = new Map<string, Map<string, Bound>>();

  constructor(
    private readonly metrics: BridgeMetrics,
    private readonly labels: { face: string; client_epoch: string },
  ) {}

  record(method: string, tool: string, outcome: Outcome, seconds: number): void {
    let byTool = this.byMethod.get(method);
    if (byTool === undefined) this.byMethod.set(method, (byTool = new Map()));
    let bound = byTool.get(tool);
    if (bound === undefined) byTool.set(tool, (bound = this.metrics.bind(this.labels, method, tool)));
    bound[outcome].inc();
    bound.seconds.observe(seconds);
  }
}

/**
 * The bridge's Prometheus metrics (prom-client), in a registry of its own so
 * two bridges in one process (tests, embedding) do not collide. Counters and
 * histograms are updated on the request path; gauges read `MetricSources` when
 * scraped.
 */
export class BridgeMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<string>;
  private readonly requestSeconds: Histogram<string>;
  private readonly upstreamSeconds: Histogram<string>;
  private readonly refusedBy: Record<RefusalReason, Counter.Internal>;
  private readonly rounds: Record<'downstream' | 'upstream', Counter.Internal>;
  private readonly upstreamByMethod = new Map<string, Histogram.Internal<string>>();

  constructor(
    private readonly upstreamEpoch: string,
    sources: MetricSources,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'mcp_bridge_requests_total',
      help: 'Client requests answered, by face, client epoch, upstream epoch, method, tool and outcome',
      labelNames: ['face', 'client_epoch', 'upstream_epoch', 'method', 'tool', 'outcome'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'mcp_bridge_request_duration_seconds',
      help: 'Time from a client request reaching a bridge to its answer',
      labelNames: ['face', 'client_epoch', 'upstream_epoch', 'method'],
      buckets: BUCKETS,
      registers,
    });
    this.upstreamSeconds = new Histogram({
      name: 'mcp_bridge_upstream_duration_seconds',
      help: 'Time of one upstream exchange (a call sent to the upstream server until its answer)',
      labelNames: ['upstream_epoch', 'method'],
      buckets: BUCKETS,
      registers,
    });
    const refused = new Counter({ name: 'mcp_bridge_refused_total', help: 'Requests refused before a bridge saw them, by reason', labelNames: ['reason'], registers });
    this.refusedBy = { auth: refused.labels('auth'), origin: refused.labels('origin'), host: refused.labels('host'), limits: refused.labels('limits'), validation: refused.labels('validation') };
    const rounds = new Counter({
      name: 'mcp_bridge_mrtr_rounds_total',
      help: 'MRTR input_required rounds: answered to a modern client (downstream) or received from a modern server (upstream)',
      labelNames: ['side'],
      registers,
    });
    this.rounds = { downstream: rounds.labels('downstream'), upstream: rounds.labels('upstream') };
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    gauge('mcp_bridge_requests_in_flight', 'Client requests being answered now, every face together', () => sources.inflight());
    gauge('mcp_bridge_upstream_sessions', 'Pooled upstream legacy sessions open now', () => sources.pool()?.sessions ?? 0);
    gauge('mcp_bridge_queued_calls', 'Calls waiting for a pooled upstream session', () => sources.pool()?.queued ?? 0);
    gauge('mcp_bridge_stdio_children', 'Upstream stdio child processes alive now', () => sources.children());
    gauge('mcp_bridge_parked_calls', 'Parked MRTR calls (modern client, legacy server)', () => sources.parked());
    gauge('mcp_bridge_listens', 'Open subscriptions/listen streams and legacy GET-stream listens', () => sources.listens());
    new Gauge({
      name: 'mcp_bridge_downstream_sessions',
      help: 'Downstream legacy sessions open now, by transport',
      labelNames: ['transport'],
      registers,
      collect() {
        for (const [transport, n] of Object.entries(sources.downstreamSessions())) this.labels(transport).set(n);
      },
    });
    let restartsSeen = 0;
    new Counter({
      name: 'mcp_bridge_child_restarts_total',
      help: 'Upstream stdio children that exited without being asked to (each is respawned on demand)',
      registers,
      collect() {
        const now = sources.childRestarts();
        this.inc(Math.max(0, now - restartsSeen));
        restartsSeen = now;
      },
    });
  }

  /** A recorder for one face and client epoch (`face`: http, stdio, streamable-http, http+sse, ws). */
  recorder(face: string, clientEpoch: string): RequestRecorder {
    return new RequestRecorder(this, { face, client_epoch: clientEpoch });
  }

  /** @internal The label children of one method and tool for a recorder. */
  bind(labels: { face: string; client_epoch: string }, method: string, tool: string): Bound {
    const base = { ...labels, upstream_epoch: this.upstreamEpoch, method, tool };
    return {
      ok: this.requests.labels({ ...base, outcome: 'ok' }),
      error: this.requests.labels({ ...base, outcome: 'error' }),
      input_required: this.requests.labels({ ...base, outcome: 'input_required' }),
      seconds: this.requestSeconds.labels({ face: labels.face, client_epoch: labels.client_epoch, upstream_epoch: this.upstreamEpoch, method }),
    };
  }

  /** One upstream exchange of `method` (already a bounded label) took `seconds`. */
  upstream(method: string, seconds: number): void {
    let child = this.upstreamByMethod.get(method);
    if (child === undefined) this.upstreamByMethod.set(method, (child = this.upstreamSeconds.labels(this.upstreamEpoch, method)));
    child.observe(seconds);
  }

  refused(reason: RefusalReason): void {
    this.refusedBy[reason].inc();
  }

  mrtrRound(side: 'downstream' | 'upstream'): void {
    this.rounds[side].inc();
  }

  /** The exposition: body and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
