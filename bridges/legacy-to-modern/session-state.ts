import type { ClientCapabilities, Implementation } from '@modelcontextprotocol/server';
import { LATEST_MODERN_VERSION } from '../../src/epochs/versions.js';
import { clientCapabilitiesToModern } from '../shared/capabilities-to-modern.js';

type Obj = Record<string, unknown>;

/** Logging levels, most verbose first (digest §1.9). */
export const LOGGING_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LoggingLevelName = (typeof LOGGING_LEVELS)[number];

export function isLoggingLevel(v: unknown): v is LoggingLevelName {
  return typeof v === 'string' && (LOGGING_LEVELS as readonly string[]).includes(v);
}

/** The `_meta` keys of the 2026 request envelope (digest §1.2). */
export const ENVELOPE_KEYS = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  logLevel: 'io.modelcontextprotocol/logLevel',
} as const;

/** What a legacy session fixed at initialize. */
export interface SessionIdentity {
  /** The version the bridge answered initialize with. */
  protocolVersion: string;
  clientInfo: Implementation;
  clientCapabilities: ClientCapabilities;
}

/**
 * The state a bridge-minted legacy session keeps for a stateless server
 * (digest §5.1, §5.5): who the client is, what it can do (translated once), its
 * log level and its resource subscriptions. Every upstream request is stamped
 * from it, so the server sees the same client on every request.
 */
export class SessionState {
  readonly identity: SessionIdentity;
  /** The client's capabilities as the 2026 `clientCapabilities` of each request. */
  readonly modernCapabilities: Obj;
  /** Set by `logging/setLevel`; absent means the server emits no logs (digest §1.2). */
  logLevel: LoggingLevelName | undefined;
  readonly subscriptions = new Set<string>();

  constructor(identity: SessionIdentity) {
    this.identity = identity;
    this.modernCapabilities = clientCapabilitiesToModern(identity.clientCapabilities, identity.protocolVersion);
  }

  /** The envelope `_meta` of an upstream request from this session. */
  envelope(): Obj {
    const meta: Obj = {
      [ENVELOPE_KEYS.protocolVersion]: LATEST_MODERN_VERSION,
      [ENVELOPE_KEYS.clientInfo]: { ...this.identity.clientInfo },
      [ENVELOPE_KEYS.clientCapabilities]: structuredClone(this.modernCapabilities),
    };
    if (this.logLevel !== undefined) meta[ENVELOPE_KEYS.logLevel] = this.logLevel;
    return meta;
  }

  /**
   * The client's params with the envelope merged into `_meta`. The client's
   * own `_meta` keys (progressToken, trace context) are kept; the envelope keys
   * are the session's, whatever the client wrote there. A 2025-11-25 `task`
   * augmentation is dropped: the bridge declares no tasks on either side (digest §5.7).
   */
  stamp(params: Obj | undefined): Obj {
    const own = params?._meta;
    const meta = typeof own === 'object' && own !== null && !Array.isArray(own) ? (own as Obj) : {};
    // A key before each spread, then plain stores: a spread copy given more keys afterwards outlives the
    // young-generation GC on this V8 (src/links/upstream-http.ts, options). The envelope wins, as before.
    const stamped: Obj = { [ENVELOPE_KEYS.protocolVersion]: undefined, ...meta };
    Object.assign(stamped, this.envelope());
    const out: Obj = { _meta: undefined, ...params };
    out._meta = stamped;
    if (Object.hasOwn(out, 'task')) delete out.task;
    return out;
  }
}
