import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { SeriesHistogram, type HistogramSeries } from './series-histogram.js';

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

const OUTCOMES: readonly Outcome[] = ['ok', 'error', 'input_required'];

/** Seconds; a relayed call on loopback takes well under a millisecond, a tool call may take minutes. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * One method (and tool) of one recorder: counts kept as plain numbers and
 * handed to prom-client when scraped, and the duration series, bound once.
 */
interface Bound {
  labels: Record<string, string>;
  pending: Record<Outcome, number>;
  seconds: HistogramSeries;
}
/**
 * Records the requests of one face and client epoch. The label children are
 * bound the first time a method/tool pair is seen and reused after, so a call
 * costs two map lookups and a few additions, no label hashing (the bench measures it).
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
    bound.pending[outcome]++;
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
  private readonly bounds: Bound[] = [];
  private readonly requestSeconds = new SeriesHistogram('mcp_bridge_request_duration_seconds', 'Time from a client request reaching a bridge to its answer', BUCKETS);
  private readonly upstreamSeconds = new SeriesHistogram('mcp_bridge_upstream_duration_seconds', 'Time of one upstream exchange (a call sent to the upstream server until its answer)', BUCKETS);
  private readonly refusedBy: Record<RefusalReason, Counter.Internal>;
  private readonly rounds: Record<'downstream' | 'upstream', Counter.Internal>;
  private readonly upstreamByMethod = new Map<string, HistogramSeries>();
  /** Duration series by face, client epoch and method (shared by that method's tools). */
  private readonly durationSeries = new Map<string, HistogramSeries>();

  constructor(
    private readonly upstreamEpoch: string,
    sources: MetricSources,
  ) {
    const registers = [this.registry];
    const bounds = this.bounds;
    collectDefaultMetrics({ register: this.registry });
    new Counter({
      name: 'mcp_bridge_requests_total',
      help: 'Client requests answered, by face, client epoch, upstream epoch, method, tool and outcome',
      labelNames: ['face', 'client_epoch', 'upstream_epoch', 'method', 'tool', 'outcome'],
      registers,
      collect() {
        for (const b of bounds) {
          for (const outcome of OUTCOMES) {
            const n = b.pending[outcome];
            // Every series appears once bound, at 0 until counted: rate() needs the zero.
            this.labels({ ...b.labels, outcome }).inc(n);
            b.pending[outcome] = 0;
          }
        }
      },
    });
    this.registry.registerMetric(this.requestSeconds as unknown as Metric);
    this.registry.registerMetric(this.upstreamSeconds as unknown as Metric);
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

  /** @internal The counts and duration series of one method and tool for a recorder. */
  bind(labels: { face: string; client_epoch: string }, method: string, tool: string): Bound {
    const durationLabels = { face: labels.face, client_epoch: labels.client_epoch, upstream_epoch: this.upstreamEpoch, method };
    // Durations are per method: a series per tool as well would multiply the buckets for little.
    const key = `${labels.face}\0${labels.client_epoch}\0${method}`;
    let seconds = this.durationSeries.get(key);
    if (seconds === undefined) this.durationSeries.set(key, (seconds = this.requestSeconds.series(durationLabels)));
    const bound: Bound = { labels: { ...labels, upstream_epoch: this.upstreamEpoch, method, tool }, pending: { ok: 0, error: 0, input_required: 0 }, seconds };
    this.bounds.push(bound);
    return bound;
  }

  /** One upstream exchange of `method` (already a bounded label) took `seconds`. */
  upstream(method: string, seconds: number): void {
    let series = this.upstreamByMethod.get(method);
    if (series === undefined) this.upstreamByMethod.set(method, (series = this.upstreamSeconds.series({ upstream_epoch: this.upstreamEpoch, method })));
    series.observe(seconds);
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
