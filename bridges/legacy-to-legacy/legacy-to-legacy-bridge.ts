import type { InitializeRequestParams, InitializeResult } from '@modelcontextprotocol/server';
import type { LegacyChannel, LegacyHandler, LegacySessionHandler, LegacySessionInfo } from '../../src/contracts/downstream.js';
import type { LegacyLink, UpstreamInit } from '../../src/contracts/upstream.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import { RpcError } from '../../src/errors.js';
import type { SessionPool } from '../../src/links/session-pool.js';
import { principalInit } from '../shared/principal-init.js';
import type { Logger } from '../../src/log.js';
import { DedicatedSession, openUpstream, upstreamRefusal } from './dedicated-session.js';
import { PooledSession } from './pooled-session.js';
import { PooledUpstream } from './pooled-upstream.js';
import { TrackedSession } from '../shared/tracked-session.js';

/** How a legacy-to-legacy bridge reaches its legacy upstream. */
export interface LegacyToLegacyOptions {
  /** How upstream sessions are obtained: a shared pool (stdio child upstreams: children keyed by capability set)
   *  or one dedicated upstream session per downstream session (remote HTTP, http+sse, WebSocket upstreams). */
  upstream: { kind: 'pooled'; pool: SessionPool } | { kind: 'dedicated'; link: LegacyLink };
  logger: Logger;
  callTimeoutMs: number;
}

/**
 * Serves initialize-era and http+sse clients from a legacy server: a relay
 * across transports that keeps what a shared upstream cannot (per-session
 * subscriptions and log levels) and routes server→client traffic to the client
 * it belongs to. It never owns the pool or the link: the daemon closes those.
 */
export class LegacyToLegacyBridge implements LegacyHandler {
  readonly #opts: LegacyToLegacyOptions;
  readonly #logger: Logger;
  readonly #pooled: PooledUpstream | undefined;
  readonly #sessions = new Set<LegacySessionHandler>();
  #seq = 0;
  #closed = false;

  constructor(opts: LegacyToLegacyOptions) {
    this.#opts = opts;
    this.#logger = opts.logger.child({ bridge: 'legacy-to-legacy' });
    if (opts.upstream.kind === 'pooled') {
      this.#pooled = new PooledUpstream({ pool: opts.upstream.pool, logger: this.#logger, callTimeoutMs: opts.callTimeoutMs });
    }
  }

  /**
   * Opens the upstream side with the client's own version, capabilities and
   * clientInfo, and answers initialize with the upstream's InitializeResult as it
   * is (the upstream negotiated with the client's version, digest §4.1).
   */
  async openSession(
    params: InitializeRequestParams,
    info: Omit<LegacySessionInfo, 'protocolVersion'>,
    channel: LegacyChannel,
  ): Promise<{ result: InitializeResult; session: LegacySessionHandler }> {
    if (this.#closed) throw new RpcError(RpcCode.InternalError, 'the bridge is shutting down');
    const init: UpstreamInit = { protocolVersion: params.protocolVersion, capabilities: params.capabilities, clientInfo: params.clientInfo, ...principalInit(info.principal) };
    const logger = this.#logger.child({ session: info.id, transport: info.transport });
    const opened = this.#pooled ? await this.#openPooled(this.#pooled, init, channel, logger) : await this.#openDedicated(init, channel, logger);
    const session = this.#track(opened.session);
    logger.info('l2l.session_opened', { requested: init.protocolVersion, protocolVersion: opened.result.protocolVersion, clientInfo: init.clientInfo });
    return { result: opened.result, session };
  }

  /** Closes every downstream session's upstream state; the pool or link stays open for its owner. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#sessions].map((s) => s.close()));
    this.#sessions.clear();
    this.#pooled?.close();
  }

  async #openPooled(up: PooledUpstream, init: UpstreamInit, channel: LegacyChannel, logger: Logger) {
    let opened;
    try {
      opened = await up.open(`s${++this.#seq}`, init, channel);
    } catch (err) {
      throw upstreamRefusal(err);
    }
    const session = new PooledSession(up, opened.record, { logger, callTimeoutMs: this.#opts.callTimeoutMs });
    return { result: { ...opened.anchor.initializeResult }, session };
  }

  async #openDedicated(init: UpstreamInit, channel: LegacyChannel, logger: Logger) {
    const link = (this.#opts.upstream as { link: LegacyLink }).link;
    const upstream = await openUpstream(link, init);
    const session = new DedicatedSession(upstream, link, channel, { logger, callTimeoutMs: this.#opts.callTimeoutMs });
    return { result: { ...upstream.initializeResult }, session };
  }

  /** Wraps a session so the bridge forgets it once it closes. */
  #track(inner: LegacySessionHandler): LegacySessionHandler {
    return new TrackedSession(inner, this.#sessions);
  }
}
