import type { ServerEntry } from '../config/servers-config.js';
import type { UpstreamFacts } from '../contracts/upstream.js';
import { HTTP_PROBE_TIMEOUT_MS } from '../epochs/http-observe.js';
import { probeUpstream } from '../epochs/probe-upstream.js';
import { authorizedFetch } from '../links/oauth/authorized-fetch.js';
import type { OAuthObserver } from '../links/oauth/oauth-observer.js';
import { UpstreamOAuth } from '../links/oauth/upstream-oauth.js';
import type { MetricSources } from '../ops/bridge-metrics.js';
import type { UpstreamOps } from '../ops/servers-ops.js';
import { BridgeError } from '../errors.js';
import type { FaceUnit, FaceUnitHandlers } from '../faces/face-unit.js';
import type { ServerRoute } from '../faces/server-routes.js';
import type { Logger } from '../log.js';
import type { BridgeOptions } from './options.js';
import { probeUntilUp } from './wait-for-upstream.js';
import { wireUpstream, type UpstreamStats, type WiredUpstream } from './wire-upstream.js';

/**
 * Where one configured server is: being probed (`starting`), unreachable and
 * probed again with backoff (`waiting`), serving (`ready`), given up on
 * (`failed`: not MCP, or a transport other than the one declared), removed from
 * the file and finishing its calls (`draining`), or gone (`stopped`).
 */
export type ServerState = 'starting' | 'waiting' | 'ready' | 'failed' | 'draining' | 'stopped';

/** One row of `GET /servers` (and what a readiness check reads). */
export interface ServerStatus {
  name: string;
  state: ServerState;
  /** The detected upstream epoch and transport, once probed. */
  epoch?: UpstreamFacts['epoch'];
  transport?: UpstreamFacts['transport'];
  protocolVersion?: string;
  /** Why it is waiting or failed. */
  error?: string;
}

/**
 * One server of a config-file daemon: its link, its bridges and its face unit.
 * Each is probed and started on its own, so one that is down or broken leaves
 * the others serving.
 */
export class ServerUnit implements ServerRoute {
  private current: ServerState = 'starting';
  private wired: WiredUpstream | undefined;
  private unit: FaceUnit | undefined;
  private lastError: string | undefined;
  private readonly stopping = new AbortController();
  private started: Promise<void> | undefined;

  /** The bridge's OAuth toward this server (issue 12), shared by its probe and its link; its own tokens, flow lock and 401s. */
  private readonly auth: UpstreamOAuth | undefined;

  /** `ops`: the daemon's metrics and traces for this server, once its epoch is known (issue 13). */
  constructor(
    readonly entry: ServerEntry,
    private readonly opts: BridgeOptions,
    private readonly makeFace: (handlers: FaceUnitHandlers) => FaceUnit,
    private readonly ops?: (epoch: UpstreamFacts['epoch']) => UpstreamOps,
    /** Told of this server's OAuth refreshes and failures (its `mcp_bridge_oauth_*` series). */
    oauthObserver?: OAuthObserver,
  ) {
    this.auth = opts.oauth && opts.upstream.kind === 'url' ? new UpstreamOAuth(opts.upstream.url, opts.oauth, opts.logger.child({ side: 'upstream' }), oauthObserver) : undefined;
  }

  get name(): string {
    return this.entry.name;
  }

  get state(): ServerState {
    return this.current;
  }

  /** The face unit while the server is ready; a draining server is already out of the route table. */
  get face(): FaceUnit | undefined {
    return this.current === 'ready' ? this.unit : undefined;
  }

  /**
   * Probes the upstream (again with backoff while it is unreachable:
   * `--wait-for-upstream`, without end unless that gives a limit) and wires it.
   * Resolves once ready or given up on; never rejects.
   */
  start(): Promise<void> {
    this.started ??= this.run().catch((err: unknown) => {
      if (this.stopping.signal.aborted) return;
      this.current = 'failed';
      this.lastError = err instanceof Error ? err.message : String(err);
      this.log.error('server.failed', { error: this.lastError });
    });
    return this.started;
  }

  status(): ServerStatus {
    const facts = this.wired?.facts;
    return {
      name: this.name,
      state: this.current,
      ...(facts ? { epoch: facts.epoch, transport: facts.transport, protocolVersion: facts.protocolVersion } : {}),
      ...(this.lastError && (this.current === 'waiting' || this.current === 'failed') ? { error: this.lastError } : {}),
    };
  }

  /** What the daemon's gauges read of this server while it is wired (`server` label). */
  metricSources(): MetricSources | undefined {
    const wired = this.wired;
    if (!wired) return undefined;
    return {
      inflight: () => wired.stats().inflight,
      downstreamSessions: (): Record<string, number> => {
        const f = this.unit?.stats();
        return f ? { 'streamable-http': f.streamableHttpSessions, 'http+sse': f.sseSessions, ws: f.wsSessions } : {};
      },
      pool: () => wired.stats().pool,
      children: () => wired.stats().children,
      childRestarts: () => wired.crashes()?.exits ?? 0,
      parked: () => wired.stats().parked ?? 0,
      listens: () => wired.listens(),
    };
  }

  stats(): (UpstreamStats & { face?: ReturnType<FaceUnit['stats']> }) | undefined {
    if (!this.wired) return undefined;
    return { ...this.wired.stats(), ...(this.unit ? { face: this.unit.stats() } : {}) };
  }

  /**
   * Stops the server: calls in flight get up to `graceMs` (listens end with
   * their graceful result), then its sessions, bridges, pool and children close.
   * The caller takes it out of the route table first, so new requests get 404.
   */
  async stop(graceMs: number, hurry?: AbortSignal): Promise<void> {
    if (this.current === 'stopped') return;
    this.stopping.abort();
    // A flow waiting for a browser ends now: its callback port is free for whatever takes this server's place.
    await this.auth?.close();
    const wired = this.wired;
    this.current = 'draining';
    if (wired) {
      const idle = await wired.drain(graceMs, hurry);
      this.log.info('server.drained', { idle, inflight: wired.stats().inflight });
      await this.unit?.close();
      await wired.close();
    }
    this.current = 'stopped';
  }

  private get log(): Logger {
    return this.opts.logger;
  }

  private async run(): Promise<void> {
    const opts = this.opts;
    const auth = this.auth;
    const probeAuth = auth ? { auth, fetch: authorizedFetch(auth, fetch, () => AbortSignal.timeout(HTTP_PROBE_TIMEOUT_MS)) } : {};
    const probe = () => probeUpstream(opts.upstream, { logger: opts.logger, timeoutMs: opts.probeTimeoutMs, epoch: opts.upstreamEpoch, ...probeAuth });
    const facts = await probeUntilUp(probe, {
      waitMs: opts.waitForUpstreamMs ?? Infinity,
      logger: opts.logger,
      signal: this.stopping.signal,
      onRetry: (err) => {
        this.current = 'waiting';
        this.lastError = err instanceof Error ? err.message : String(err);
      },
    });
    if (this.stopping.signal.aborted) return;
    const declared = this.entry.transport;
    if (declared && declared !== facts.transport) {
      throw new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', `declared transport ${declared}, but the server answered as ${facts.transport} (${facts.epoch})`);
    }
    this.wired = wireUpstream(facts, opts, auth, this.ops?.(facts.epoch));
    this.unit = this.makeFace({ modern: this.wired.modern, legacy: this.wired.legacy, logFields: { server: this.name } });
    this.current = 'ready';
    this.lastError = undefined;
    this.log.info('server.ready', { epoch: facts.epoch, transport: facts.transport, protocolVersion: facts.protocolVersion, upstream: facts.serverInfo?.name });
  }
}
