import type { Logger } from '../log.js';
import type { BridgeMetrics } from './bridge-metrics.js';
import { listenForMetrics, type MetricsListener } from './metrics-listener.js';
import type { Tracing } from './tracing.js';

/**
 * What starts and stops in a daemon's ops, one upstream or a config file's
 * servers alike: the `--metrics-listen` server (`GET /metrics` alone, without
 * auth, on its own address) and, at the end, the flush of unexported spans.
 */
export class OpsLifecycle {
  private metricsServer: MetricsListener | undefined;

  constructor(
    private readonly where: { host: string; port: number } | undefined,
    private readonly logger: Logger,
  ) {}

  /** Resolves with the listener's URL, when one is asked for and there are metrics. */
  async listen(metrics: BridgeMetrics | undefined): Promise<string | undefined> {
    if (!this.where || !metrics) return undefined;
    this.metricsServer = await listenForMetrics(this.where, metrics, this.logger);
    return this.metricsServer.url;
  }

  async close(tracing: Tracing | undefined): Promise<void> {
    await this.metricsServer?.close();
    await tracing?.shutdown().catch((err: unknown) => this.logger.warn('tracing.shutdown_failed', { err }));
  }
}
