import type { ServerEntry, ServersConfig } from '../config/servers-config.js';
import { buildClientAuth } from '../faces/auth-build.js';
import { HttpFace } from '../faces/http-face.js';
import { ServerRoutes } from '../faces/server-routes.js';
import { canonicalJson } from '../links/canonical-json.js';
import { ServersReadiness } from '../ops/servers-readiness.js';
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
  const face = await HttpFace.start({
    servers: routes,
    logger: logger.child({ side: 'face' }),
    listen: base.listen,
    allowOrigins: base.allowOrigins,
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
    ops: { readiness: new ServersReadiness(servers, () => closing !== undefined) },
  });

  const add = (entry: ServerEntry) => {
    const unit = new ServerUnit(entry, optionsFor(entry, base), (handlers) => face.unit(handlers));
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
    logger.info('shutdown.done', { ms: Date.now() - started });
    markDone();
  };

  logger.info('listening', { url: face.url, servers: config.servers.map((s) => `${face.url}/servers/${s.name}/mcp`) });
  return {
    url: face.url,
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

/** The daemon's options with one server's entry over them: its upstream, epoch, pool, call timeout and tool filters. */
export function optionsFor(entry: ServerEntry, base: BridgeOptions): BridgeOptions {
  return {
    ...base,
    upstream: entry.upstream,
    upstreamEpoch: entry.epoch ?? 'auto',
    poolMax: entry.poolMax ?? base.poolMax,
    callTimeoutMs: entry.callTimeoutMs ?? base.callTimeoutMs,
    allowTools: entry.allowTools,
    denyTools: entry.denyTools,
    logger: base.logger.child({ server: entry.name }),
  };
}
