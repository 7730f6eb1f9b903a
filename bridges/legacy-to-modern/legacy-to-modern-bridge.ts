import type { InitializeRequestParams, InitializeResult } from '@modelcontextprotocol/server';
import type { LegacyChannel, LegacyHandler, LegacySessionHandler, LegacySessionInfo } from '../../src/contracts/downstream.js';
import type { ModernLink, UpstreamFacts } from '../../src/contracts/upstream.js';
import { RpcError } from '../../src/errors.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import type { Logger } from '../../src/log.js';
import type { ListenBudget } from '../shared/listen-budget.js';
import { ToolHeaderRegistry } from '../shared/tool-header-registry.js';
import { BridgedSession } from './bridged-session.js';
import { initializeFromDiscover } from './initialize-from-discover.js';
import { ListenKeeper } from './listen-keeper.js';
import { ENVELOPE_KEYS, SessionState } from './session-state.js';
import { TrackedSession } from '../shared/tracked-session.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What the legacy-to-modern bridge is built with. */
export interface LegacyToModernOptions {
  /** The upstream modern server (HTTP or stdio). The daemon owns and closes it. */
  link: ModernLink;
  /** From detection: `facts.discover` is the upstream's DiscoverResult. */
  facts: UpstreamFacts;
  logger: Logger;
  /** Deadline of each upstream request leg. */
  callTimeoutMs: number;
  /** Most MRTR rounds fulfilled for one request before answering with an error. */
  maxInputRounds: number;
  /** How long a client has to answer one bridged server→client request. */
  inputTimeoutMs: number;
  /** How long opening a session waits for its listen's acknowledgement (default 5 s). */
  listenAckTimeoutMs?: number;
  /** `--max-listens`: the daemon's bound on open listens, shared with modern-to-modern; absent: unbounded. */
  listenBudget?: ListenBudget;
}

/**
 * Serves initialize-era and http+sse clients from a 2026-07-28 server (digest
 * §5): `initialize` is answered from the cached `server/discover`; each session
 * keeps what the stateless server cannot (identity, capabilities, log level,
 * subscriptions) and stamps it on every upstream request; `input_required`
 * becomes real server→client requests; a per-session `subscriptions/listen`
 * feeds the client's unsolicited notifications.
 */
export class LegacyToModernBridge implements LegacyHandler {
  private readonly opts: LegacyToModernOptions;
  private readonly log: Logger;
  private readonly serverCapabilities: Obj;
  private readonly sessions = new Set<LegacySessionHandler>();
  /** Only toward an HTTP upstream: stdio clients MAY ignore `x-mcp-header` (digest §2.5). */
  private readonly toolHeaders: ToolHeaderRegistry | undefined;
  private closed = false;

  constructor(opts: LegacyToModernOptions) {
    this.opts = opts;
    this.log = opts.logger.child({ bridge: 'legacy-to-modern' });
    const discover = opts.facts.discover as unknown;
    const fromDiscover = isObj(discover) ? discover.capabilities : undefined;
    this.serverCapabilities = isObj(fromDiscover) ? fromDiscover : opts.facts.capabilities;
    this.toolHeaders = opts.link.kind === 'http' ? new ToolHeaderRegistry() : undefined;
  }

  /** Answers initialize locally and opens the session's listen (waiting, bounded, for its acknowledgement). */
  async openSession(
    params: InitializeRequestParams,
    info: Omit<LegacySessionInfo, 'protocolVersion'>,
    channel: LegacyChannel,
  ): Promise<{ result: InitializeResult; session: LegacySessionHandler }> {
    if (this.closed) throw new RpcError(RpcCode.InternalError, 'the bridge is shutting down');
    const result = initializeFromDiscover(this.opts.facts, params.protocolVersion);
    const logger = this.log.child({ session: info.id.slice(0, 8), transport: info.transport });
    const state = new SessionState({ protocolVersion: result.protocolVersion, clientInfo: info.clientInfo, clientCapabilities: info.clientCapabilities });
    const keeper = new ListenKeeper({
      link: this.opts.link,
      serverCapabilities: this.serverCapabilities,
      // A listen carries no logs (digest §1.8), so its envelope has no logLevel.
      envelope: () => {
        const meta = state.envelope();
        delete meta[ENVELOPE_KEYS.logLevel];
        return meta;
      },
      deliver: (n) => {
        if (!channel.notify(n)) logger.debug('l2m.notification.undeliverable', { method: n.method });
      },
      logger,
      ackTimeoutMs: this.opts.listenAckTimeoutMs,
      budget: this.opts.listenBudget,
      upstreamHeaders: info.principal?.upstreamHeaders,
    });
    const resources = this.serverCapabilities.resources;
    const session = new BridgedSession({
      link: this.opts.link,
      logger,
      callTimeoutMs: this.opts.callTimeoutMs,
      maxInputRounds: this.opts.maxInputRounds,
      inputTimeoutMs: this.opts.inputTimeoutMs,
      state,
      keeper,
      canSubscribe: isObj(resources) && resources.subscribe === true,
      toolHeaders: this.toolHeaders,
    });
    await keeper.start();
    if (this.closed) {
      await session.close();
      throw new RpcError(RpcCode.InternalError, 'the bridge is shutting down');
    }
    logger.info('l2m.session_opened', { requested: params.protocolVersion, protocolVersion: result.protocolVersion, clientInfo: info.clientInfo });
    return { result, session: this.track(session) };
  }

  /** Closes every session (and its listen); the link stays open for its owner. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.sessions].map((s) => s.close()));
    this.sessions.clear();
  }

  private track(inner: BridgedSession): LegacySessionHandler {
    return new TrackedSession(inner, this.sessions);
  }
}
