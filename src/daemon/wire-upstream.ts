import { LegacyToLegacyBridge } from '../../bridges/legacy-to-legacy/index.js';
import { LegacyToModernBridge } from '../../bridges/legacy-to-modern/index.js';
import { ModernToModernBridge } from '../../bridges/modern-to-modern/index.js';
import { ModernToLegacyBridge } from '../../bridges/modern-to-legacy/index.js';
import { ListenBudget } from '../../bridges/shared/listen-budget.js';
import type { LegacyHandler, ModernHandler } from '../contracts/downstream.js';
import type { UpstreamFacts } from '../contracts/upstream.js';
import { LegacyStdioLink } from '../links/legacy-stdio-link.js';
import { ModernStdioLink } from '../links/modern-stdio-link.js';
import type { UpstreamAuth } from '../contracts/upstream.js';
import type { UpstreamOps } from '../ops/servers-ops.js';
import type { ClusterRouter } from '../cluster/cluster-router.js';
import { buildUpstream, type Upstream } from './build-upstream.js';
import { InflightCalls } from './inflight-calls.js';
import type { BridgeOptions } from './options.js';
import { ToolFilter } from './tool-filter.js';

/** Counters of one wired upstream; fields that do not apply to it are absent. */
export interface UpstreamStats {
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
}

/** One upstream with its bridges in front: the handlers a face serves, counted and filtered. */
export interface WiredUpstream {
  readonly facts: UpstreamFacts;
  readonly modern: ModernHandler;
  readonly legacy: LegacyHandler;
  /** Refuses new requests, ends listens gracefully, and resolves once calls in flight are done (true) or `graceMs` passed / `hurry` aborted (false). */
  drain(graceMs: number, hurry?: AbortSignal): Promise<boolean>;
  /** Closes the bridges, the pool and the link (children: stdin EOF, SIGTERM, SIGKILL). */
  close(): Promise<void>;
  stats(): UpstreamStats;
  /** Exits of the stdio child(ren), for readiness and `mcp_bridge_child_restarts_total`; undefined for a remote upstream. */
  crashes(): { exits: number; quickExits: number; lastExitAt?: number } | undefined;
  /** Open listens, every bridge in front of this upstream together. */
  listens(): number;
}

/**
 * Builds the link for the detected upstream, picks one bridge per client epoch,
 * and wraps both handlers: the tool filter (`allowTools`/`denyTools`) innermost,
 * so a hidden tool is refused before anything goes upstream, and InflightCalls
 * outermost, so a graceful stop counts every request.
 */
/** `auth`: the bridge's OAuth toward this upstream, when it has one (issue 12). */
/** `ops`: metrics and traces around the handlers and the link (issue 13), when the daemon has them (BridgeOps, or one server's of ServersOps). */
/** `cluster`: this replica's router, whose secret seals requestState and whose tag names the instance (issue 16). */
export function wireUpstream(facts: UpstreamFacts, opts: BridgeOptions, auth?: UpstreamAuth, ops?: UpstreamOps, cluster?: ClusterRouter): WiredUpstream {
  const upstream = buildUpstream(facts, opts, auth);
  ops?.observeLink(upstream.link);
  const listenBudget = new ListenBudget(opts.maxListens);
  const bridges = handlersFor(upstream, opts, listenBudget, cluster);
  const filter = ToolFilter.from(opts.allowTools, opts.denyTools);
  const inflight = new InflightCalls();
  const filtered = { modern: filter ? filter.wrapModern(bridges.modern) : bridges.modern, legacy: filter ? filter.wrapLegacy(bridges.legacy) : bridges.legacy };
  const modern = inflight.wrapModern(ops ? ops.modern(filtered.modern) : filtered.modern);
  const legacy = inflight.wrapLegacy(ops ? ops.legacy(filtered.legacy) : filtered.legacy);
  return {
    facts,
    modern,
    legacy,
    drain: (graceMs, hurry) => inflight.drain(graceMs, hurry),
    close: async () => {
      await Promise.allSettled([modern.close(), legacy.close()]);
      if (upstream.epoch === 'legacy') await upstream.pool.close();
      await upstream.link.close();
    },
    stats: () => ({
      inflight: inflight.size,
      draining: inflight.draining,
      children: childPids(upstream).length,
      ...(upstream.epoch === 'legacy' ? { pool: upstream.pool.stats() } : {}),
      ...(bridges.modern instanceof ModernToLegacyBridge ? bridges.modern.stats() : {}),
    }),
    crashes: () => {
      const link = upstream.link;
      return link instanceof LegacyStdioLink || link instanceof ModernStdioLink ? link.crashes() : undefined;
    },
    listens: () => listenBudget.size,
  };
}

function childPids(upstream: Upstream): number[] {
  const link = upstream.link;
  if (link instanceof LegacyStdioLink) return link.pids();
  if (link instanceof ModernStdioLink && link.pid !== undefined) return [link.pid];
  return [];
}

/** One handler per client epoch, chosen by the upstream's epoch (DESIGN: bridges/<client>-to-<server>). */
function handlersFor(upstream: Upstream, opts: BridgeOptions, listenBudget: ListenBudget, cluster: ClusterRouter | undefined): { modern: ModernHandler; legacy: LegacyHandler } {
  const logger = opts.logger.child({ side: 'bridge' });
  // One `--max-listens` budget for every listen the bridges in front of this upstream hold.
  const common = { logger, callTimeoutMs: opts.callTimeoutMs, listenBudget };
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
      maxParkedPerPrincipal: opts.maxParkedPerPrincipal,
    }),
    legacy: new LegacyToLegacyBridge({
      ...common,
      upstream: dedicated ? { kind: 'dedicated', link: upstream.link } : { kind: 'pooled', pool: upstream.pool },
    }),
  };
}
