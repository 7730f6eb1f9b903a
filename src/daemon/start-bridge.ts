import type { UpstreamFacts } from '../contracts/upstream.js';
import { probeUpstream } from '../epochs/probe-upstream.js';
import { buildClientAuth } from '../faces/auth-build.js';
import { HttpFace } from '../faces/http-face.js';
import { StdioFace } from '../faces/stdio-face.js';
import type { BridgeOptions } from './options.js';
import { probeUntilUp } from './wait-for-upstream.js';
import { wireUpstream } from './wire-upstream.js';

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
  const wired = wireUpstream(facts, opts);
  const { modern, legacy } = wired;

  let closing: Promise<void> | undefined;
  const hurry = new AbortController();
  let markDone!: () => void;
  const done = new Promise<void>((resolve) => (markDone = resolve));
  const shutdown = async (face: Face, graceMs: number) => {
    const started = Date.now();
    face.drain?.();
    const idle = await wired.drain(graceMs, hurry.signal);
    logger.info('shutdown.drained', { graceMs, waitedMs: Date.now() - started, idle, inflight: wired.stats().inflight });
    await face.close();
    await wired.close();
    logger.info('shutdown.done', { ms: Date.now() - started });
    markDone();
  };
  const closer = (face: Face) => (graceMs = 0) => {
    if (closing && graceMs === 0) hurry.abort();
    return (closing ??= shutdown(face, graceMs));
  };
  let httpFace: HttpFace | undefined;
  const stats = (): BridgeStats => ({ ...wired.stats(), ...(httpFace ? { face: httpFace.stats() } : {}) });

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
    auth: buildClientAuth(opts.clientAuth, opts.authToken, () => (opts.upstream.kind === 'url' ? opts.upstream.url : undefined)),
    maxSessionsPerPrincipal: opts.maxSessionsPerPrincipal,
    maxBodyBytes: opts.maxBodyBytes,
    maxHeaderBytes: opts.maxHeaderBytes,
    maxSessions: opts.maxSessions,
    eventStoreMax: opts.eventStoreMax,
    heartbeatMs: opts.heartbeatMs,
    sessionIdleMs: opts.sessionIdleMs,
    debugStats: opts.debugStats ? debugStats(stats) : undefined,
  });
  httpFace = face;
  logger.info('listening', { url: face.url, mcp: `${face.url}/mcp`, sse: `${face.url}/sse`, ws: `${face.url.replace(/^http/, 'ws')}/ws` });
  return { url: face.url, facts, done, close: closer(face), stats };
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
