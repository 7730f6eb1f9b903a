import { LegacyToLegacyBridge } from '../../bridges/legacy-to-legacy/index.js';
import { LegacyToModernBridge } from '../../bridges/legacy-to-modern/index.js';
import { ModernToModernBridge } from '../../bridges/modern-to-modern/index.js';
import { ModernToLegacyBridge } from '../../bridges/modern-to-legacy/index.js';
import { ListenBudget } from '../../bridges/shared/listen-budget.js';
import type { LegacyHandler, ModernHandler } from '../contracts/downstream.js';
import { ClusterRouter } from '../cluster/cluster-router.js';
import type { UpstreamFacts } from '../contracts/upstream.js';
import { probeUpstream } from '../epochs/probe-upstream.js';
import { HttpFace } from '../faces/http-face.js';
import { StdioFace } from '../faces/stdio-face.js';
import { LegacyStdioLink } from '../links/legacy-stdio-link.js';
import { ModernStdioLink } from '../links/modern-stdio-link.js';
import { buildUpstream, type Upstream } from './build-upstream.js';
import { InflightCalls } from './inflight-calls.js';
import type { BridgeOptions } from './options.js';
import { probeUntilUp } from './wait-for-upstream.js';

/** A running daemon: its faces, its upstream, and how to stop it. */
export interface RunningBridge {
  /** The HTTP faces' base URL (`http://host:port`), absent with `--stdio`. */
  readonly url?: string;
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
export interface BridgeStats {
  /** Requests the bridges are answering now, every face together. */
  inflight: number;
  draining: boolean;
  /** Upstream child processes alive (stdio upstreams). */
  children: number;
  /** The legacy session pool: open sessions, leased ones, waiting acquires. */
  pool?: { sessions: number; leased: number; queued: number };
  /** Parked MRTR calls and open listens of the modern-to-legacy bridge. */
  parked?: number;
  listens?: number;
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
  const probe = () => probeUpstream(opts.upstream, { logger, timeoutMs: opts.probeTimeoutMs, epoch: opts.upstreamEpoch });
  const facts = opts.waitForUpstreamMs === undefined ? await probe() : await probeUntilUp(probe, { waitMs: opts.waitForUpstreamMs, logger });
  logger.info('upstream detected', { epoch: facts.epoch, transport: facts.transport, protocolVersion: facts.protocolVersion, server: facts.serverInfo?.name });
  const upstream = buildUpstream(facts, opts);
  const cluster = opts.cluster && !opts.stdio ? new ClusterRouter({ ...opts.cluster, callTimeoutMs: opts.callTimeoutMs, logger }) : undefined;
  await cluster?.start();
  const bridges = handlersFor(upstream, opts, cluster);
  const inflight = new InflightCalls();
  const modern = inflight.wrapModern(bridges.modern);
  const legacy = inflight.wrapLegacy(bridges.legacy);

  let closing: Promise<void> | undefined;
  const hurry = new AbortController();
  let markDone!: () => void;
  const done = new Promise<void>((resolve) => (markDone = resolve));
  const shutdown = async (face: Face, graceMs: number) => {
    const started = Date.now();
    if (cluster && graceMs > 0) await handOff(cluster, Math.min(opts.cluster!.handoffMs, graceMs), graceMs, hurry.signal, () => ({ parked: bridges.modern instanceof ModernToLegacyBridge ? bridges.modern.stats() : { parked: 0, listens: 0 }, inflight: inflight.size }));
    face.drain?.();
    const idle = await inflight.drain(graceMs, hurry.signal);
    logger.info('shutdown.drained', { graceMs, waitedMs: Date.now() - started, idle, inflight: inflight.size });
    await face.close();
    await Promise.allSettled([modern.close(), legacy.close()]);
    if (upstream.epoch === 'legacy') await upstream.pool.close();
    await upstream.link.close();
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
    inflight: inflight.size,
    draining: inflight.draining,
    children: childPids(upstream).length,
    ...(upstream.epoch === 'legacy' ? { pool: upstream.pool.stats() } : {}),
    ...(bridges.modern instanceof ModernToLegacyBridge ? bridges.modern.stats() : {}),
    ...(httpFace ? { face: httpFace.stats() } : {}),
    ...(cluster ? { cluster: { instance: cluster.instanceId, draining: cluster.draining, forwarding: cluster.forwarding } } : {}),
  });

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
    allowOrigins: opts.allowOrigins,
    allowHosts: opts.allowHosts,
    authToken: opts.authToken,
    maxBodyBytes: opts.maxBodyBytes,
    maxHeaderBytes: opts.maxHeaderBytes,
    maxSessions: opts.maxSessions,
    eventStoreMax: opts.eventStoreMax,
    heartbeatMs: opts.heartbeatMs,
    sessionIdleMs: opts.sessionIdleMs,
    debugStats: opts.debugStats ? debugStats(stats) : undefined,
    cluster,
  });
  httpFace = face;
  if (cluster) logger.info('cluster', { self: cluster.peers.self, instance: cluster.instanceId });
  logger.info('listening', { url: face.url, mcp: `${face.url}/mcp`, sse: `${face.url}/sse`, ws: `${face.url.replace(/^http/, 'ws')}/ws` });
  return { url: face.url, facts, done, close: closer(face), stats };
}

/** What shutdown needs of a face; only the HTTP face can stop accepting before it closes. */
interface Face {
  drain?(): void;
  close(): Promise<void>;
}

/** `GET /debug/stats`: the counters, plus memory after a full collection when node runs with --expose-gc. */
function debugStats(stats: () => BridgeStats): () => Record<string, unknown> {
  return () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const m = process.memoryUsage();
    return { ...stats(), memory: { gc: gc !== undefined, rss: m.rss, heapUsed: m.heapUsed, external: m.external } };
  };
}

function childPids(upstream: Upstream): number[] {
  const link = upstream.link;
  if (link instanceof LegacyStdioLink) return link.pids();
  if (link instanceof ModernStdioLink && link.pid !== undefined) return [link.pid];
  return [];
}

/** One handler per client epoch, chosen by the upstream's epoch (DESIGN: bridges/<client>-to-<server>). */
function handlersFor(upstream: Upstream, opts: BridgeOptions, cluster: ClusterRouter | undefined): { modern: ModernHandler; legacy: LegacyHandler } {
  const logger = opts.logger.child({ side: 'bridge' });
  // One `--max-listens` budget for every listen the bridges in front of this upstream hold.
  const common = { logger, callTimeoutMs: opts.callTimeoutMs, listenBudget: new ListenBudget(opts.maxListens) };
  if (upstream.epoch === 'modern') {
    return {
      modern: new ModernToModernBridge({ ...common, link: upstream.link }),
      legacy: new LegacyToModernBridge({
        ...common,
        link: upstream.link,
        facts: upstream.facts,
        maxInputRounds: opts.maxInputRounds,
        inputTimeoutMs: opts.inputTimeoutMs,
      }),
    };
  }
  const dedicated = upstream.link.kind !== 'stdio';
  return {
    modern: new ModernToLegacyBridge({
      ...common,
      pool: upstream.pool,
      facts: upstream.facts,
      requestStateTtlMs: opts.requestStateTtlMs,
      // Every replica seals with the key the cluster secret derives and names itself by its tag.
      requestStateKey: cluster?.requestStateKey ?? opts.requestStateKey,
      instanceId: cluster?.instanceId,
      maxParkedCalls: opts.maxParkedCalls,
    }),
    legacy: new LegacyToLegacyBridge({
      ...common,
      upstream: dedicated ? { kind: 'dedicated', link: upstream.link } : { kind: 'pooled', pool: upstream.pool },
    }),
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
