import type { LegacyLink, ModernLink, UpstreamAuth, UpstreamFacts } from '../contracts/upstream.js';
import { LegacyHttpLink } from '../links/legacy-http-link.js';
import { LegacyStdioLink } from '../links/legacy-stdio-link.js';
import { lineLimitedFetch } from '../links/line-limited-fetch.js';
import { authorizedFetch } from '../links/oauth/authorized-fetch.js';
import { ModernHttpLink } from '../links/modern-http-link.js';
import { ModernStdioLink } from '../links/modern-stdio-link.js';
import { SessionPool } from '../links/session-pool.js';
import { SseLink } from '../links/sse-link.js';
import { WsLink } from '../links/ws-link.js';
import type { BridgeOptions } from './options.js';

/** The upstream side the daemon wires bridges to, chosen by the detected epoch. */
export type Upstream =
  | { epoch: 'modern'; link: ModernLink; facts: UpstreamFacts }
  | { epoch: 'legacy'; link: LegacyLink; pool: SessionPool; facts: UpstreamFacts };

/** Builds the link (and for legacy servers, the session pool) that fits the facts. */
export function buildUpstream(facts: UpstreamFacts, opts: BridgeOptions, auth?: UpstreamAuth): Upstream {
  const logger = opts.logger.child({ side: 'upstream' });
  const target = opts.upstream;
  const common = { logger, callTimeoutMs: opts.callTimeoutMs, auth };
  if (facts.epoch === 'modern') {
    const link: ModernLink =
      target.kind === 'command'
        ? new ModernStdioLink({ ...common, command: target.command, args: target.args, env: target.env, cwd: target.cwd, maxLineBytes: opts.maxLineBytes })
        : new ModernHttpLink({ ...common, url: target.url, headers: target.headers, maxLineBytes: opts.maxLineBytes });
    return { epoch: 'modern', link, facts };
  }
  const link = legacyLinkFor(facts, opts, common);
  const pool = new SessionPool(link, { max: opts.poolMax, idleMs: opts.poolIdleMs, logger, maxQueued: opts.poolMaxQueued });
  return { epoch: 'legacy', link, pool, facts };
}

function legacyLinkFor(facts: UpstreamFacts, opts: BridgeOptions, common: { logger: BridgeOptions['logger']; callTimeoutMs: number; auth?: UpstreamAuth }): LegacyLink {
  const target = opts.upstream;
  if (target.kind === 'command') {
    return new LegacyStdioLink({ ...common, command: target.command, args: target.args, env: target.env, cwd: target.cwd, maxLineBytes: opts.maxLineBytes });
  }
  const limited = lineLimitedFetch(opts.maxLineBytes);
  // The http+sse link speaks fetch: OAuth wraps it (the WebSocket link asks `auth` at its handshake).
  const http = { ...common, url: target.url, headers: target.headers, fetch: common.auth ? authorizedFetch(common.auth, limited) : limited };
  const byTransport = {
    // No fetch: the session reads node:http answers directly, so a parked call holds no WHATWG stream (issue 7, row 4).
    'streamable-http': () => new LegacyHttpLink({ ...common, url: target.url, headers: target.headers, maxLineBytes: opts.maxLineBytes }),
    'http+sse': () => new SseLink(http),
    ws: () => new WsLink(http),
    stdio: () => {
      throw new Error('a URL upstream cannot be a stdio transport');
    },
  } satisfies Record<UpstreamFacts['transport'], () => LegacyLink>;
  return byTransport[facts.transport]();
}
