import { LegacyToLegacyBridge } from '../../bridges/legacy-to-legacy/index.js';
import { LegacyToModernBridge } from '../../bridges/legacy-to-modern/index.js';
import { ModernToModernBridge } from '../../bridges/modern-to-modern/index.js';
import { ModernToLegacyBridge } from '../../bridges/modern-to-legacy/index.js';
import type { LegacyHandler, ModernHandler } from '../contracts/downstream.js';
import type { UpstreamFacts } from '../contracts/upstream.js';
import { probeUpstream } from '../epochs/probe-upstream.js';
import { HttpFace } from '../faces/http-face.js';
import { StdioFace } from '../faces/stdio-face.js';
import { buildUpstream, type Upstream } from './build-upstream.js';
import type { BridgeOptions } from './options.js';

/** A running daemon: its faces, its upstream, and how to stop it. */
export interface RunningBridge {
  /** The HTTP faces' base URL (`http://host:port`), absent with `--stdio`. */
  readonly url?: string;
  readonly facts: UpstreamFacts;
  /** Resolves when the bridge has stopped (stdin EOF with `--stdio`, or close()). */
  readonly done: Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the daemon: detects the upstream's epoch, builds its link, puts the
 * bridge for each client epoch in front of it, and opens the faces.
 */
export async function startBridge(opts: BridgeOptions): Promise<RunningBridge> {
  const logger = opts.logger;
  const facts = await probeUpstream(opts.upstream, { logger, timeoutMs: opts.probeTimeoutMs, epoch: opts.upstreamEpoch });
  logger.info('upstream detected', { epoch: facts.epoch, transport: facts.transport, protocolVersion: facts.protocolVersion, server: facts.serverInfo?.name });
  const upstream = buildUpstream(facts, opts);
  const { modern, legacy } = handlersFor(upstream, opts);

  let closing: Promise<void> | undefined;
  let markDone!: () => void;
  const done = new Promise<void>((resolve) => (markDone = resolve));
  const shutdown = async (face: { close(): Promise<void> }) => {
    await face.close();
    await Promise.allSettled([modern.close(), legacy.close()]);
    if (upstream.epoch === 'legacy') await upstream.pool.close();
    await upstream.link.close();
    markDone();
  };

  const faceOptions = { modern, legacy, logger: logger.child({ side: 'face' }), inputTimeoutMs: opts.inputTimeoutMs };
  if (opts.stdio) {
    const face = StdioFace.start(faceOptions);
    const close = () => (closing ??= shutdown(face));
    void face.done.then(close);
    return { facts, done, close };
  }
  const face = await HttpFace.start({
    ...faceOptions,
    listen: opts.listen,
    allowOrigins: opts.allowOrigins,
    maxBodyBytes: opts.maxBodyBytes,
    heartbeatMs: opts.heartbeatMs,
    sessionIdleMs: opts.sessionIdleMs,
  });
  logger.info('listening', { url: face.url, mcp: `${face.url}/mcp`, sse: `${face.url}/sse`, ws: `${face.url.replace(/^http/, 'ws')}/ws` });
  return { url: face.url, facts, done, close: () => (closing ??= shutdown(face)) };
}

/** One handler per client epoch, chosen by the upstream's epoch (DESIGN: bridges/<client>-to-<server>). */
function handlersFor(upstream: Upstream, opts: BridgeOptions): { modern: ModernHandler; legacy: LegacyHandler } {
  const logger = opts.logger.child({ side: 'bridge' });
  const common = { logger, callTimeoutMs: opts.callTimeoutMs };
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
      requestStateKey: opts.requestStateKey,
    }),
    legacy: new LegacyToLegacyBridge({
      ...common,
      upstream: dedicated ? { kind: 'dedicated', link: upstream.link } : { kind: 'pooled', pool: upstream.pool },
    }),
  };
}
