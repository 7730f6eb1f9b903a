import type { ServerEntry, ServersConfig } from '../config/servers-config.js';
import { buildClientAuth } from '../faces/auth-build.js';
import { HttpFace } from '../faces/http-face.js';
import { ServerRoutes } from '../faces/server-routes.js';
import { canonicalJson } from '../links/canonical-json.js';
import type { MetricSources } from '../ops/bridge-metrics.js';
import { ServersOps } from '../ops/servers-ops.js';
import { ServersReadiness } from '../ops/servers-readiness.js';
import { startTracing } from '../ops/tracing.js';
import { DEFAULT_OAUTH, type OAuthConfig } from '../links/oauth/oauth-config.js';
import { serverOAuthConfig } from '../config/server-oauth.js';
import type { BridgeOptions } from './options.js';
import { ServerUnit, type ServerStatus } from './server-unit.js';
import { debugStats } from './start-bridge.js';
import { upstreamUrlOf } from './upstream-url-of.js';

/** What one reload changed, by server name. */
export interface ReloadReport {
  added: string[];
  removed: string[];
  changed: string[];
  kept: string[];
  /** Unchanged entries that had `failed` (not MCP, not the declared transport): probed again. */
  retried: string[];
  /** The `"bridge"` object differs from the running one: those options need a restart. */
  bridgeChanged: boolean;
}

/** A daemon serving every server of a config file, each under `/servers/<name>/`. */
export interface RunningServers {
  readonly url: string;
  /** Where `GET /metrics` is served (the main port behind its auth, or `metricsListen`), when metrics are on. */
  readonly metricsUrl?: string;
  readonly done: Promise<void>;
  /** Each server's name, state and detected epoch (`GET /servers`; what a readiness check reads). */
  servers(): ServerStatus[];
  /**
   * Applies a re-read file (SIGHUP): unchanged entries keep their sessions,
   * children, parked calls and listens; removed ones leave the route table at
   * once (404) and drain for up to `--shutdown-timeout`; added and changed ones start.
   */
  reload(next: ServersConfig): ReloadReport;
  /** Graceful stop as RunningBridge.close: every server drains for up to `graceMs`, then all closes. */
  close(graceMs?: number): Promise<void>;
  stats(): Record<string, unknown>;
}

/** Starts the HTTP face at once and every server beside it, each probed on its own. */
export async function startServers(config: ServersConfig, base: BridgeOptions): Promise<RunningServers> {
  const logger = base.logger;
  const units = new Map<string, ServerUnit>();
  const stopping = new Set<Promise<void>>();
  const servers = (): ServerStatus[] => [...units.values()].map((u) => u.status());
  const routes = new ServerRoutes({ named: true, list: () => ({ servers: servers() }) });
  const stats = () => ({
    servers: Object.fromEntries([...units].map(([name, u]) => [name, { state: u.state, ...u.stats() }])),
    face: face.stats(),
  });
  let closing: Promise<void> | undefined;
  // One registry and one tracer for every server; series per server carry its name (issue 13 in config mode).
  const ops = new ServersOps({
    tracing: await startTracing(),
    metrics: base.metrics,
    metricsListen: base.metricsListen,
    corsOrigins: base.corsOrigins,
    readiness: new ServersReadiness(servers, () => closing !== undefined),
    servers: { servers: () => wiredSources(units.values()) },
    logger,
  });
  const metricsUrl = await ops.listenMetrics();
  const face = await HttpFace.start({
    servers: routes,
    logger: logger.child({ side: 'face' }),
    listen: base.listen,
    // A CORS origin passes the Origin check too: one list decides both (src/ops/cors.ts).
    allowOrigins: [...base.allowOrigins, ...base.corsOrigins],
    allowHosts: base.allowHosts,
    authToken: base.authToken,
    auth: buildClientAuth(base.clientAuth, base.authToken, (path) => upstreamUrlOf(units.values(), path)),
    maxSessionsPerPrincipal: base.maxSessionsPerPrincipal,
    maxBodyBytes: base.maxBodyBytes,
    maxHeaderBytes: base.maxHeaderBytes,
    maxJsonDepth: base.maxJsonDepth,
    maxSessions: base.maxSessions,
    heartbeatMs: base.heartbeatMs,
    sessionIdleMs: base.sessionIdleMs,
    inputTimeoutMs: base.inputTimeoutMs,
    eventStoreMax: base.eventStoreMax,
    debugStats: base.debugStats ? debugStats(stats) : undefined,
    ops: ops.faceOps,
  });

  const add = (entry: ServerEntry) => {
    const unit = new ServerUnit(entry, optionsFor(entry, base, config.file), (handlers) => face.unit(handlers), (epoch) => ops.forServer(entry.name, epoch), ops.oauthObserver(entry.name));
    units.set(entry.name, unit);
    routes.set(entry.name, unit);
    void unit.start();
  };
  const remove = (unit: ServerUnit, graceMs: number, hurry?: AbortSignal) => {
    routes.delete(unit.name);
    units.delete(unit.name);
    const stopped = unit.stop(graceMs, hurry).finally(() => stopping.delete(stopped));
    stopping.add(stopped);
  };
  for (const entry of config.servers) add(entry);
  let running = config;

  const hurry = new AbortController();
  let markDone!: () => void;
  const done = new Promise<void>((resolve) => (markDone = resolve));
  const shutdown = async (graceMs: number) => {
    const started = Date.now();
    face.drain();
    for (const unit of [...units.values()]) remove(unit, graceMs, hurry.signal);
    await Promise.allSettled([...stopping]);
    await face.close();
    await ops.close();
    logger.info('shutdown.done', { ms: Date.now() - started });
    markDone();
  };

  const metrics = metricsUrl ?? (base.metrics ? `${face.url}/metrics` : undefined);
  logger.info('listening', { url: face.url, servers: config.servers.map((s) => `${face.url}/servers/${s.name}/mcp`), metrics, tracing: ops.tracing !== undefined });
  return {
    url: face.url,
    metricsUrl: metrics,
    done,
    servers,
    stats,
    reload(next) {
      const report: ReloadReport = { added: [], removed: [], changed: [], kept: [], retried: [], bridgeChanged: canonicalJson(next.bridge) !== canonicalJson(running.bridge) };
      const byName = new Map(next.servers.map((e) => [e.name, e]));
      for (const unit of [...units.values()]) {
        const entry = byName.get(unit.name);
        const same = entry?.fingerprint === unit.entry.fingerprint;
        if (same && unit.state !== 'failed') {
          report.kept.push(unit.name);
          continue;
        }
        (same ? report.retried : entry ? report.changed : report.removed).push(unit.name);
        remove(unit, base.shutdownTimeoutMs, hurry.signal);
      }
      for (const entry of next.servers) {
        if (units.has(entry.name)) continue;
        if (!report.changed.includes(entry.name) && !report.retried.includes(entry.name)) report.added.push(entry.name);
        add(entry);
      }
      running = { ...next, bridge: running.bridge };
      logger.info('config.reloaded', { file: next.file, ...report });
      if (report.bridgeChanged) logger.warn('config.bridge_changed', { file: next.file, note: 'the "bridge" options apply at start; restart mcp-bridge to change them' });
      return report;
    },
    close(graceMs = 0) {
      if (closing && graceMs === 0) hurry.abort();
      return (closing ??= shutdown(graceMs));
    },
  };
}

/** The daemon's options with one server's entry over them: its upstream, epoch, pool, call timeout, tool filters and OAuth. */
export function optionsFor(entry: ServerEntry, base: BridgeOptions, file?: string): BridgeOptions {
  return {
    ...base,
    upstream: entry.upstream,
    oauth: oauthFor(entry, base, file),
    upstreamEpoch: entry.epoch ?? 'auto',
    poolMax: entry.poolMax ?? base.poolMax,
    callTimeoutMs: entry.callTimeoutMs ?? base.callTimeoutMs,
    allowTools: entry.allowTools,
    denyTools: entry.denyTools,
    logger: base.logger.child({ server: entry.name }),
  };
}

/** The gauges' sources: every server that is wired now, by name. */
function* wiredSources(units: Iterable<ServerUnit>): Iterable<{ server: string; sources: MetricSources }> {
  for (const unit of units) {
    const sources = unit.metricSources();
    if (sources) yield { server: unit.name, sources };
  }
}

/**
 * A URL server's OAuth, as for `--upstream`: on unless the entry says
 * `"oauth": false`, sends a static Authorization header, or the daemon passes
 * each client's own token through; its settings over the daemon's.
 */
function oauthFor(entry: ServerEntry, base: BridgeOptions, file: string | undefined): OAuthConfig | undefined {
  const target = entry.upstream;
  if (target.kind !== 'url' || entry.oauth === false || base.clientAuth?.mode === 'pass-through') return undefined;
  if (Object.keys(target.headers).some((h) => h.toLowerCase() === 'authorization')) return undefined;
  const cfg = serverOAuthConfig(entry.oauth ?? {}, base.oauth ?? DEFAULT_OAUTH);
  // Hints name the server as `login` takes it, so its own client id and secret are used.
  return file === undefined ? cfg : { ...cfg, commandTarget: `--config ${shellWord(file)} --server ${entry.name}` };
}

/** A path as one shell word (quoted when it needs to be). */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
