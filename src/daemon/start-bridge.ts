import { ClusterRouter } from '../cluster/cluster-router.js';
import type { UpstreamFacts } from '../contracts/upstream.js';
import { HTTP_PROBE_TIMEOUT_MS } from '../epochs/http-observe.js';
import { probeUpstream } from '../epochs/probe-upstream.js';
import { authorizedFetch } from '../links/oauth/authorized-fetch.js';
import { UpstreamOAuth } from '../links/oauth/upstream-oauth.js';
import { buildClientAuth } from '../faces/auth-build.js';
import { HttpFace } from '../faces/http-face.js';
import { StdioFace } from '../faces/stdio-face.js';
import { BridgeOps, oauthObserver } from '../ops/bridge-ops.js';
import { startTracing } from '../ops/tracing.js';
import type { OAuthCounts } from '../ops/oauth-counts.js';
import type { BridgeOptions } from './options.js';
import { probeUntilUp } from './wait-for-upstream.js';
import { wireUpstream, type UpstreamStats } from './wire-upstream.js';

/** A running daemon: its faces, its upstream, and how to stop it. */
export interface RunningBridge {
  /** The HTTP faces' base URL (`http://host:port`), absent with `--stdio`. */
  readonly url?: string;
  /** Where `GET /metrics` is served (the main port, or `--metrics-listen`), when metrics are on. */
  readonly metricsUrl?: string;
  readonly facts: UpstreamFacts;
  /** Resolves when the bridge has stopped (stdin EOF with `--stdio`, or close()). */
  readonly done: Promise<void>;
  /**
   * Stops the bridge. With `graceMs` > 0 (SIGTERM: `--shutdown-timeout`) it first
   * stops accepting, ends listens with their graceful result and lets calls in
   * flight finish for up to `graceMs`; then every face, bridge, session and
   * child is closed (children: stdin EOF, then SIGTERM, then SIGKILL). A second
   * call with 0 cuts a running grace period short.
   */
  close(graceMs?: number): Promise<void>;
  /** Counters for diagnostics and leak tests (also `GET /debug/stats` with `--debug-stats`). */
  stats(): BridgeStats;
}

/** What `RunningBridge.stats()` reports; fields that do not apply to this upstream are absent. */
export interface BridgeStats extends UpstreamStats {
  /** Downstream sessions and modern requests on the HTTP face. */
  face?: Record<string, number>;
  /** Cluster mode: this replica's tag, whether it is handing off, requests being relayed to peers. */
  cluster?: { instance: string; draining: boolean; forwarding: number };
}

/**
 * Starts the daemon: detects the upstream's epoch, builds its link, puts the
 * bridge for each client epoch in front of it, and opens the faces.
 */
export async function startBridge(opts: BridgeOptions): Promise<RunningBridge> {
  const logger = opts.logger;
  // Made before the probe, which may already refresh a stored token or fail a flow.
  const oauthCounts = opts.oauth && opts.upstream.kind === 'url' ? oauthObserver(opts.metrics) : undefined;
  const auth = upstreamAuthFor(opts, oauthCounts);
  const probeAuth = auth ? { auth, fetch: authorizedFetch(auth, fetch, () => AbortSignal.timeout(HTTP_PROBE_TIMEOUT_MS)) } : {};
  const probe = () => probeUpstream(opts.upstream, { logger, timeoutMs: opts.probeTimeoutMs, epoch: opts.upstreamEpoch, ...probeAuth });
  const facts = opts.waitForUpstreamMs === undefined ? await probe() : await probeUntilUp(probe, { waitMs: opts.waitForUpstreamMs, logger });
  logger.info('upstream detected', { epoch: facts.epoch, transport: facts.transport, protocolVersion: facts.protocolVersion, server: facts.serverInfo?.name });
  const cluster = opts.cluster && !opts.stdio ? new ClusterRouter({ ...opts.cluster, callTimeoutMs: opts.callTimeoutMs, logger }) : undefined;
  await cluster?.start();
  const ops = new BridgeOps({ tracing: await startTracing(), metrics: opts.metrics, metricsListen: opts.metricsListen, corsOrigins: opts.corsOrigins, upstream: opts.upstream, facts, logger, oauth: oauthCounts });
  const wired = wireUpstream(facts, opts, auth, ops, cluster);
  const { modern, legacy } = wired;

  let closing: Promise<void> | undefined;
  const hurry = new AbortController();
  let markDone!: () => void;
  const done = new Promise<void>((resolve) => (markDone = resolve));
  const shutdown = async (face: Face, graceMs: number) => {
    const started = Date.now();
    if (cluster && graceMs > 0) await handOff(cluster, Math.min(opts.cluster!.handoffMs, graceMs), graceMs, hurry.signal, () => ({ parked: { parked: wired.stats().parked ?? 0, listens: wired.listens() }, inflight: wired.stats().inflight }));
    face.drain?.();
    const idle = await wired.drain(graceMs, hurry.signal);
    logger.info('shutdown.drained', { graceMs, waitedMs: Date.now() - started, idle, inflight: wired.stats().inflight });
    await face.close();
    await wired.close();
    await ops.close();
    cluster?.close();
    logger.info('shutdown.done', { ms: Date.now() - started });
    markDone();
  };
  const closer = (face: Face) => (graceMs = 0) => {
    if (closing && graceMs === 0) hurry.abort();
    return (closing ??= shutdown(face, graceMs));
  };
  let httpFace: HttpFace | undefined;
  const stats = (): BridgeStats => ({
    ...wired.stats(),
    ...(httpFace ? { face: httpFace.stats() } : {}),
    ...(cluster ? { cluster: { instance: cluster.instanceId, draining: cluster.draining, forwarding: cluster.forwarding } } : {}),
  });

  ops.bind({
    inflight: () => wired.stats().inflight,
    draining: () => wired.stats().draining || cluster?.draining === true,
    downstreamSessions: (): Record<string, number> => {
      const f = httpFace?.stats();
      return f ? { 'streamable-http': f.streamableHttpSessions, 'http+sse': f.sseSessions, ws: f.wsSessions } : {};
    },
    pool: () => wired.stats().pool,
    children: () => wired.stats().children,
    childRestarts: () => wired.crashes()?.exits ?? 0,
    crashes: () => wired.crashes(),
    parked: () => wired.stats().parked ?? 0,
    listens: () => wired.listens(),
  });
  const metricsUrl = await ops.listenMetrics();

  const faceOptions = { modern, legacy, logger: logger.child({ side: 'face' }), inputTimeoutMs: opts.inputTimeoutMs, maxJsonDepth: opts.maxJsonDepth };
  if (opts.stdio) {
    const face = StdioFace.start({ ...faceOptions, maxLineBytes: opts.maxLineBytes });
    const close = closer(face);
    void face.done.then(() => close());
    return { facts, done, close, stats };
  }
  const face = await HttpFace.start({
    ...faceOptions,
    listen: opts.listen,
    // A CORS origin passes the Origin check too: one list decides both (src/ops/cors.ts).
    allowOrigins: [...opts.allowOrigins, ...opts.corsOrigins],
    allowHosts: opts.allowHosts,
    authToken: opts.authToken,
    auth: buildClientAuth(opts.clientAuth, opts.authToken, () => (opts.upstream.kind === 'url' ? opts.upstream.url : undefined)),
    maxSessionsPerPrincipal: opts.maxSessionsPerPrincipal,
    maxBodyBytes: opts.maxBodyBytes,
    maxHeaderBytes: opts.maxHeaderBytes,
    maxSessions: opts.maxSessions,
    eventStoreMax: opts.eventStoreMax,
    heartbeatMs: opts.heartbeatMs,
    sessionIdleMs: opts.sessionIdleMs,
    debugStats: opts.debugStats ? debugStats(stats) : undefined,
    ops: ops.faceOps,
    cluster,
  });
  httpFace = face;
  if (cluster) logger.info('cluster', { self: cluster.peers.self, instance: cluster.instanceId });
  const metrics = metricsUrl ?? (opts.metrics ? `${face.url}/metrics` : undefined);
  logger.info('listening', { url: face.url, mcp: `${face.url}/mcp`, sse: `${face.url}/sse`, ws: `${face.url.replace(/^http/, 'ws')}/ws`, readyz: `${face.url}/readyz`, metrics, tracing: ops.tracing !== undefined });
  return { url: face.url, metricsUrl: metrics, facts, done, close: closer(face), stats };
}

/** The bridge's OAuth toward a URL upstream, shared by the probe and the link. */
function upstreamAuthFor(opts: BridgeOptions, counts: OAuthCounts | undefined): UpstreamOAuth | undefined {
  if (!opts.oauth || opts.upstream.kind !== 'url') return undefined;
  return new UpstreamOAuth(opts.upstream.url, opts.oauth, opts.logger.child({ side: 'upstream' }), counts);
}

/** What shutdown needs of a face; only the HTTP face can stop accepting before it closes. */
interface Face {
  drain?(): void;
  close(): Promise<void>;
}

/** `GET /debug/stats`: the counters, plus memory after a full collection when node runs with --expose-gc. */
export function debugStats(stats: () => object): () => Record<string, unknown> {
  return () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const m = process.memoryUsage();
    return { ...stats(), memory: { gc: gc !== undefined, rss: m.rss, heapUsed: m.heapUsed, external: m.external } };
  };
}
/** Polling period while a replica hands off; the wait itself is bounded by the grace period. */
const HANDOFF_POLL_MS = 100;

/**
 * The first step of a cluster replica's graceful stop: health checks see 503
 * and new work goes to peers, while this replica keeps serving what it holds
 * for at least `minMs` (so load balancers see the 503) and until its parked
 * calls and relays finish or time out (bounded by `graceMs`). Then the
 * ordinary drain runs.
 */
async function handOff(cluster: ClusterRouter, minMs: number, graceMs: number, hurry: AbortSignal, load: () => { parked: { parked: number; listens: number }; inflight: number }): Promise<void> {
  cluster.drain();
  const started = Date.now();
  const until = started + graceMs;
  const busy = () => {
    if (Date.now() - started < minMs) return true;
    const l = load();
    return l.parked.parked > 0 || l.inflight > l.parked.listens || cluster.forwarding > 0;
  };
  while (busy() && Date.now() < until && !hurry.aborted) await new Promise((r) => setTimeout(r, HANDOFF_POLL_MS));
}
