import type { LegacyHandler, ModernHandler } from '../contracts/downstream.js';
import type { LegacyLink, ModernLink, UpstreamFacts } from '../contracts/upstream.js';
import type { UpstreamTarget } from '../daemon/options.js';
import type { HttpFaceOps } from '../faces/http-face.js';
import type { Logger } from '../log.js';
import { BridgeMetrics, type MetricSources } from './bridge-metrics.js';
import { KnownTools } from './method-label.js';
import { observeLegacy, observeModern, type Observers } from './observed-handlers.js';
import { observeLink } from './observed-link.js';
import { OpsLifecycle } from './ops-lifecycle.js';
import { OAuthCounts } from './oauth-counts.js';
import { Readiness, upstreamAddress, type CrashRecord } from './readiness.js';
import type { Tracing } from './tracing.js';

export interface BridgeOpsOptions {
  metrics: boolean;
  metricsListen?: { host: string; port: number };
  corsOrigins: string[];
  upstream: UpstreamTarget;
  facts: UpstreamFacts;
  logger: Logger;
  /** Tracing, when the environment asked for it (`await startTracing()`). */
  tracing?: Tracing;
  /** The counts of the OAuth client toward the upstream, when there is one (see `oauthObserver`). */
  oauth?: OAuthCounts;
}

/** What the OAuth client toward the upstream reports to: counts the metrics read, or nothing when metrics are off. */
export function oauthObserver(metrics: boolean): OAuthCounts | undefined {
  return metrics ? new OAuthCounts() : undefined;
}

/** What the ops read from the running daemon, bound once the daemon has built it. */
export interface OpsSources extends MetricSources {
  draining(): boolean;
  crashes(): CrashRecord | undefined;
}

/**
 * Everything operators and browsers see of a bridge, in one place: metrics
 * (prom-client), traces (OpenTelemetry, on when the environment asks), the
 * readiness answer and the CORS switch. The daemon wraps its link and handlers
 * with it and hands `faceOps` to the HTTP face.
 */
export class BridgeOps {
  readonly metrics: BridgeMetrics | undefined;
  readonly tracing: Tracing | undefined;
  private readonly lifecycle: OpsLifecycle;
  readonly readiness: Readiness;
  private readonly observers: Observers;
  private sources: OpsSources | undefined;

  constructor(private readonly opts: BridgeOpsOptions) {
    const epoch = opts.facts.epoch;
    // Scrapes happen after bind(); until then every gauge reads zero.
    const s = () => this.sources;
    this.metrics = opts.metrics
      ? new BridgeMetrics(epoch, {
          inflight: () => s()?.inflight() ?? 0,
          downstreamSessions: () => s()?.downstreamSessions() ?? {},
          pool: () => s()?.pool(),
          children: () => s()?.children() ?? 0,
          childRestarts: () => s()?.childRestarts() ?? 0,
          parked: () => s()?.parked() ?? 0,
          listens: () => s()?.listens() ?? 0,
        })
      : undefined;
    if (opts.oauth) this.metrics?.watchOAuth(opts.oauth);
    this.tracing = opts.tracing;
    this.lifecycle = new OpsLifecycle(opts.metricsListen, opts.logger);
    this.observers = { metrics: this.metrics, tracing: this.tracing, upstreamEpoch: epoch, tools: new KnownTools() };
    this.readiness = new Readiness({
      draining: () => this.sources?.draining() ?? false,
      crashes: opts.upstream.kind === 'command' ? () => this.sources?.crashes() ?? { exits: 0, quickExits: 0 } : undefined,
      address: opts.upstream.kind === 'url' ? upstreamAddress(opts.upstream.url) : undefined,
    });
    // The daemon builds this after detection: the upstream has been probed.
    this.readiness.markProbed();
  }

  /** Binds the daemon's counters (called once it has built them). */
  bind(sources: OpsSources): void {
    this.sources = sources;
  }

  observeLink(link: ModernLink | LegacyLink): void {
    observeLink(link, this.opts.facts.epoch, this.metrics, this.tracing);
  }

  modern(h: ModernHandler): ModernHandler {
    return this.metrics || this.tracing ? observeModern(h, this.observers) : h;
  }

  legacy(h: LegacyHandler): LegacyHandler {
    return this.metrics || this.tracing ? observeLegacy(h, this.observers) : h;
  }

  /** What the HTTP face serves: /metrics unless it has its own listener, /readyz, CORS. */
  get faceOps(): HttpFaceOps {
    return { metrics: this.metrics, metricsRoute: this.opts.metricsListen === undefined, readiness: this.readiness, cors: this.opts.corsOrigins.length > 0 };
  }

  /** `--metrics-listen`: `GET /metrics` alone, without auth, on its own address; resolves with its URL. */
  listenMetrics(): Promise<string | undefined> {
    return this.lifecycle.listen(this.metrics);
  }

  /** Stops the metrics listener and flushes the spans not exported yet. */
  close(): Promise<void> {
    return this.lifecycle.close(this.tracing);
  }
}
