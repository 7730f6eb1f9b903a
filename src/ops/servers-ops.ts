import type { LegacyHandler, ModernHandler } from '../contracts/downstream.js';
import type { LegacyLink, ModernLink } from '../contracts/upstream.js';
import type { HttpFaceOps } from '../faces/http-face.js';
import type { OAuthObserver } from '../links/oauth/oauth-observer.js';
import type { Logger } from '../log.js';
import { BridgeMetrics, type ServerSources } from './bridge-metrics.js';
import { KnownTools } from './method-label.js';
import { OAuthCounts } from './oauth-counts.js';
import { observeLegacy, observeModern, type Observers } from './observed-handlers.js';
import { observeLink } from './observed-link.js';
import { OpsLifecycle } from './ops-lifecycle.js';
import type { ReadinessCheck } from './readiness.js';
import type { Tracing } from './tracing.js';

/** What `wireUpstream` asks of the ops: observe the link and both handlers of one upstream. */
export interface UpstreamOps {
  observeLink(link: ModernLink | LegacyLink): void;
  modern(h: ModernHandler): ModernHandler;
  legacy(h: LegacyHandler): LegacyHandler;
}

export interface ServersOpsOptions {
  metrics: boolean;
  metricsListen?: { host: string; port: number };
  corsOrigins: string[];
  /** `/readyz` of the daemon (every server ready). */
  readiness: ReadinessCheck;
  /** The gauges' sources, one per wired server. */
  servers: ServerSources;
  logger: Logger;
  /** Tracing, when the environment asked for it (`await startTracing()`). */
  tracing?: Tracing;
}

/**
 * The ops of a config-file daemon (issues 13, 14): one metrics registry and
 * one tracer for every server. Each server observes its link and handlers
 * through `forServer`, so its series carry `server` and its spans
 * `mcp.bridge.server`; a server wired again after SIGHUP reuses its series.
 */
export class ServersOps {
  readonly metrics: BridgeMetrics | undefined;
  readonly tracing: Tracing | undefined;
  private readonly lifecycle: OpsLifecycle;
  private readonly oauthCounts = new Map<string, OAuthCounts>();

  constructor(private readonly opts: ServersOpsOptions) {
    this.metrics = opts.metrics ? new BridgeMetrics('', opts.servers) : undefined;
    this.tracing = opts.tracing;
    this.lifecycle = new OpsLifecycle(opts.metricsListen, opts.logger);
  }

  /** The observers of server `name`, whose upstream speaks `upstreamEpoch`. */
  forServer(name: string, upstreamEpoch: string): UpstreamOps {
    const metrics = this.metrics?.scope(name, upstreamEpoch);
    const tracing = this.tracing;
    const observers: Observers = { metrics, tracing, upstreamEpoch, tools: new KnownTools(), server: name };
    const on = metrics !== undefined || tracing !== undefined;
    return {
      observeLink: (link) => observeLink(link, upstreamEpoch, metrics, tracing, name),
      modern: (h) => (on ? observeModern(h, observers) : h),
      legacy: (h) => (on ? observeLegacy(h, observers) : h),
    };
  }

  /**
   * The counts behind server `name`'s `mcp_bridge_oauth_*` series. A server
   * started again under its name (SIGHUP) keeps counting into the same ones,
   * so the counters never go back.
   */
  oauthObserver(name: string): OAuthObserver | undefined {
    if (!this.metrics) return undefined;
    let counts = this.oauthCounts.get(name);
    if (counts === undefined) {
      this.oauthCounts.set(name, (counts = new OAuthCounts()));
      this.metrics.watchOAuth(counts, name);
    }
    return counts;
  }

  /** What the HTTP face serves: /metrics unless it has its own listener, /readyz, CORS. */
  get faceOps(): HttpFaceOps {
    return { metrics: this.metrics, metricsRoute: this.opts.metricsListen === undefined, readiness: this.opts.readiness, cors: this.opts.corsOrigins.length > 0 };
  }

  /** `--metrics-listen` (or the "bridge" object's `metricsListen`): resolves with the URL, when there is one. */
  listenMetrics(): Promise<string | undefined> {
    return this.lifecycle.listen(this.metrics);
  }

  /** Stops the metrics listener and flushes the spans not exported yet. */
  close(): Promise<void> {
    return this.lifecycle.close(this.tracing);
  }
}
