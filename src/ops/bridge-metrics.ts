import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { REFRESH_OUTCOMES } from '../links/oauth/oauth-observer.js';
import type { OAuthCounts } from './oauth-counts.js';
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

/**
 * A config-file daemon's gauges: one set of sources per server, each series
 * labelled `server` with the name from the file (issue 14), so the label is
 * bounded by the file.
 */
export interface ServerSources {
  servers(): Iterable<{ server: string; sources: MetricSources }>;
}

/** What the request path records into: the daemon's metrics, or one server's view of them. */
export interface RequestMetrics {
  /** The recorder of one face and client epoch; the same one each time it is asked for. */
  recorder(face: string, clientEpoch: string): RequestRecorder;
  /** One upstream exchange of `method` (already a bounded label) took `seconds`. */
  upstream(method: string, seconds: number): void;
  mrtrRound(side: 'downstream' | 'upstream'): void;
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
    private readonly metrics: MetricsScope,
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
 * scraped. A config-file daemon has one registry for every server: its
 * per-server series carry `server`, and each server records through its
 * `scope` (kept across reloads, so a series is never registered twice).
 */
export class BridgeMetrics implements RequestMetrics {
  readonly registry = new Registry();
  /** @internal Every bound method/tool series, read when scraped. */
  readonly bounds: Bound[] = [];
  /** @internal */
  readonly requestSeconds = new SeriesHistogram('mcp_bridge_request_duration_seconds', 'Time from a client request reaching a bridge to its answer', BUCKETS);
  /** @internal */
  readonly upstreamSeconds = new SeriesHistogram('mcp_bridge_upstream_duration_seconds', 'Time of one upstream exchange (a call sent to the upstream server until its answer)', BUCKETS);
  /** @internal */
  readonly roundsCounter: Counter;
  private readonly refusedBy: Record<RefusalReason, Counter.Internal>;
  private readonly root: MetricsScope;
  private readonly scopes = new Map<string, MetricsScope>();
  /** The OAuth clients' counts by server ('' for the one upstream), read when scraped. */
  private readonly oauthSources = new Map<string, [Record<string, string>, OAuthCounts]>();

  /** `upstreamEpoch`: the one upstream's (ignored with `ServerSources`: each scope names its own). */
  constructor(upstreamEpoch: string, sources: MetricSources | ServerSources) {
    const registers = [this.registry];
    const bounds = this.bounds;
    collectDefaultMetrics({ register: this.registry });
    new Counter({
      name: 'mcp_bridge_requests_total',
      help: 'Client requests answered, by face, client epoch, upstream epoch, method, tool and outcome',
      labelNames: ['server', 'face', 'client_epoch', 'upstream_epoch', 'method', 'tool', 'outcome'],
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
    this.roundsCounter = new Counter({
      name: 'mcp_bridge_mrtr_rounds_total',
      help: 'MRTR input_required rounds: answered to a modern client (downstream) or received from a modern server (upstream)',
      labelNames: ['server', 'side'],
      registers,
    });
    this.root = new MetricsScope(this, {}, upstreamEpoch);
    // One row per server (labelled) in a config-file daemon, one unlabelled row otherwise.
    const rows = (): Array<[Record<string, string>, MetricSources]> => ('servers' in sources ? [...sources.servers()].map((s): [Record<string, string>, MetricSources] => [{ server: s.server }, s.sources]) : [[{}, sources]]);
    const gauge = (name: string, help: string, read: (s: MetricSources) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['server'],
        registers,
        collect() {
          // A server removed from the file leaves no stale series behind.
          this.reset();
          for (const [labels, s] of rows()) this.set(labels, read(s));
        },
      });
    gauge('mcp_bridge_requests_in_flight', 'Client requests being answered now, every face together', (s) => s.inflight());
    gauge('mcp_bridge_upstream_sessions', 'Pooled upstream legacy sessions open now', (s) => s.pool()?.sessions ?? 0);
    gauge('mcp_bridge_queued_calls', 'Calls waiting for a pooled upstream session', (s) => s.pool()?.queued ?? 0);
    gauge('mcp_bridge_stdio_children', 'Upstream stdio child processes alive now', (s) => s.children());
    gauge('mcp_bridge_parked_calls', 'Parked MRTR calls (modern client, legacy server)', (s) => s.parked());
    gauge('mcp_bridge_listens', 'Open subscriptions/listen streams and legacy GET-stream listens', (s) => s.listens());
    new Gauge({
      name: 'mcp_bridge_downstream_sessions',
      help: 'Downstream legacy sessions open now, by transport',
      labelNames: ['server', 'transport'],
      registers,
      collect() {
        this.reset();
        for (const [labels, s] of rows()) for (const [transport, n] of Object.entries(s.downstreamSessions())) this.set({ ...labels, transport }, n);
      },
    });
    const oauthSources = this.oauthSources;
    new Counter({
      name: 'mcp_bridge_oauth_refreshes_total',
      help: 'refresh_token grants sent to the upstream authorization server, by outcome (ok, rejected: an OAuth error answer, error: no answer)',
      labelNames: ['server', 'outcome'],
      registers,
      collect() {
        // The OAuth client's observer keeps the counts; a scrape hands them over as they stand.
        this.reset();
        for (const [labels, counts] of oauthSources.values()) for (const outcome of REFRESH_OUTCOMES) this.inc({ ...labels, outcome }, counts.refreshes.get(outcome) ?? 0);
      },
    });
    new Counter({
      name: 'mcp_bridge_oauth_failures_total',
      help: 'OAuth flows toward the upstream that failed, and requests refused after authorization, by reason (an OAuth error code or a bridge reason)',
      labelNames: ['server', 'reason'],
      registers,
      collect() {
        this.reset();
        for (const [labels, counts] of oauthSources.values()) for (const [reason, n] of counts.failures) this.inc({ ...labels, reason }, n);
      },
    });
    // Exits seen so far per server ('' for the one upstream); a server started again under its name counts from 0.
    const restartsSeen = new Map<string, number>();
    new Counter({
      name: 'mcp_bridge_child_restarts_total',
      help: 'Upstream stdio children that exited without being asked to (each is respawned on demand)',
      labelNames: ['server'],
      registers,
      collect() {
        for (const [labels, s] of rows()) {
          const key = labels.server ?? '';
          const now = s.childRestarts();
          const seen = restartsSeen.get(key) ?? 0;
          this.inc(labels, Math.max(0, now - (now < seen ? 0 : seen)));
          restartsSeen.set(key, now);
        }
      },
    });
  }

  /**
   * What one server of a config-file daemon records into: its series carry
   * `server: name`. The same scope comes back for the same name and epoch, so
   * a server started again (SIGHUP) goes on counting in its old series.
   */
  scope(server: string, upstreamEpoch: string): MetricsScope {
    const key = `${server}\0${upstreamEpoch}`;
    let scope = this.scopes.get(key);
    if (scope === undefined) this.scopes.set(key, (scope = new MetricsScope(this, { server }, upstreamEpoch)));
    return scope;
  }

  /**
   * Reads `counts` into `mcp_bridge_oauth_refreshes_total` and
   * `mcp_bridge_oauth_failures_total`: the OAuth client toward the one upstream
   * (no `server`), or toward the config-file server `server` (a server started
   * again under its name replaces its counts).
   */
  watchOAuth(counts: OAuthCounts, server?: string): void {
    this.oauthSources.set(server ?? '', [server === undefined ? {} : { server }, counts]);
  }

  /** A recorder for one face and client epoch (`face`: http, stdio, streamable-http, http+sse, ws). */
  recorder(face: string, clientEpoch: string): RequestRecorder {
    return this.root.recorder(face, clientEpoch);
  }

  upstream(method: string, seconds: number): void {
    this.root.upstream(method, seconds);
  }

  refused(reason: RefusalReason): void {
    this.refusedBy[reason].inc();
  }

  mrtrRound(side: 'downstream' | 'upstream'): void {
    this.root.mrtrRound(side);
  }

  /** The exposition: body and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/**
 * The request-path series of one upstream (the daemon's one, or a named
 * server's): recorders, duration series and MRTR counters bound once, with
 * the scope's labels in front.
 */
export class MetricsScope implements RequestMetrics {
  private readonly recorders = new Map<string, RequestRecorder>();
  private readonly upstreamByMethod = new Map<string, HistogramSeries>();
  /** Duration series by face, client epoch and method (shared by that method's tools). */
  private readonly durationSeries = new Map<string, HistogramSeries>();
  private readonly rounds: Record<'downstream' | 'upstream', Counter.Internal>;

  constructor(
    private readonly metrics: BridgeMetrics,
    private readonly labels: { server?: string },
    private readonly upstreamEpoch: string,
  ) {
    this.rounds = { downstream: metrics.roundsCounter.labels({ ...labels, side: 'downstream' }), upstream: metrics.roundsCounter.labels({ ...labels, side: 'upstream' }) };
  }

  recorder(face: string, clientEpoch: string): RequestRecorder {
    const key = `${face}\0${clientEpoch}`;
    let recorder = this.recorders.get(key);
    if (recorder === undefined) this.recorders.set(key, (recorder = new RequestRecorder(this, { face, client_epoch: clientEpoch })));
    return recorder;
  }

  /** @internal The counts and duration series of one method and tool for a recorder. */
  bind(labels: { face: string; client_epoch: string }, method: string, tool: string): Bound {
    const durationLabels = { ...this.labels, face: labels.face, client_epoch: labels.client_epoch, upstream_epoch: this.upstreamEpoch, method };
    // Durations are per method: a series per tool as well would multiply the buckets for little.
    const key = `${labels.face}\0${labels.client_epoch}\0${method}`;
    let seconds = this.durationSeries.get(key);
    if (seconds === undefined) this.durationSeries.set(key, (seconds = this.metrics.requestSeconds.series(durationLabels)));
    const bound: Bound = { labels: { ...this.labels, ...labels, upstream_epoch: this.upstreamEpoch, method, tool }, pending: { ok: 0, error: 0, input_required: 0 }, seconds };
    this.metrics.bounds.push(bound);
    return bound;
  }

  upstream(method: string, seconds: number): void {
    let series = this.upstreamByMethod.get(method);
    if (series === undefined) this.upstreamByMethod.set(method, (series = this.metrics.upstreamSeconds.series({ ...this.labels, upstream_epoch: this.upstreamEpoch, method })));
    series.observe(seconds);
  }

  mrtrRound(side: 'downstream' | 'upstream'): void {
    this.rounds[side].inc();
  }
}
