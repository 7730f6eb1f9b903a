import type { Epoch } from '../epochs/versions.js';
import type { OAuthConfig } from '../links/oauth/oauth-config.js';
import type { ClientAuthConfig } from '../identity/client-auth-config.js';
import type { Logger } from '../log.js';

/** Where the upstream server is: a URL, or a command the bridge spawns. */
export type UpstreamTarget =
  | { kind: 'url'; url: string; headers: Record<string, string> }
  | { kind: 'command'; command: string; args: string[]; env?: Record<string, string>; cwd?: string };

/** Everything `startBridge` needs; the CLI fills it from flags over DEFAULT_OPTIONS. */
export interface BridgeOptions {
  upstream: UpstreamTarget;
  /** `auto` detects; otherwise the epoch is trusted without probing. */
  upstreamEpoch: 'auto' | Epoch;
  /** HTTP faces: host and port (port 0 picks a free one). Ignored with `stdio`. */
  listen: { host: string; port: number };
  /** Serve one client on stdin/stdout instead of HTTP. */
  stdio: boolean;
  /** Extra allowed Origin values; loopback origins are always allowed. */
  allowOrigins: string[];
  /** Extra allowed `Host` names (`name` or `name:port`, `*` for any); loopback names, IP literals and the listen host always are. */
  allowHosts: string[];
  /** When set, every HTTP face (not /healthz) requires `Authorization: Bearer <authToken>`. */
  authToken?: string;
  /** Lets the HTTP faces listen on a non-loopback address without `authToken`. */
  allowUnauthenticated: boolean;
  /** `--auth jwt` or `--auth pass-through` (wins over `authToken`); absent: the token mode, or none. */
  clientAuth?: ClientAuthConfig;
  /** Downstream sessions one principal may hold at most (`--max-sessions-per-principal`). */
  maxSessionsPerPrincipal?: number;
  /** Parked MRTR calls one principal may hold at most (`--max-parked-per-principal`). */
  maxParkedPerPrincipal?: number;
  logger: Logger;
  /**
   * Upper bound of upstream legacy sessions (children for stdio). The pool opens up to min(poolMax, CPU cores)
   * on demand and grows past that only while a queue stalls (SessionPool `eager`, `growAfterMs`).
   */
  poolMax: number;
  /** An idle pooled upstream session (or child) is closed after this long. */
  poolIdleMs: number;
  /** An idle downstream legacy session is closed after this long. */
  sessionIdleMs: number;
  /** A call to the upstream that takes longer is cancelled and answered with an error. */
  callTimeoutMs: number;
  /** How long detection waits for a stdio server's answer to the `server/discover` probe. */
  probeTimeoutMs: number;
  /** Largest accepted HTTP request body (and WebSocket message). */
  maxBodyBytes: number;
  /** Largest accepted HTTP request head (node's `maxHeaderSize`; 431 beyond). */
  maxHeaderBytes: number;
  /** Longest line read from the upstream (SSE streams, stdio child stdout) and from a stdio client. */
  maxLineBytes: number;
  /** Deepest JSON nesting accepted from a client (400 -32600 beyond, checked before parsing). */
  maxJsonDepth: number;
  /** Downstream legacy sessions at most, across Streamable HTTP, http+sse and WebSocket (503 beyond). */
  maxSessions: number;
  /** Parked MRTR calls at most (modern client, legacy server); enforced by the modern-to-legacy bridge. */
  maxParkedCalls: number;
  /** Open `subscriptions/listen` streams and legacy GET-stream listens at most; enforced by the bridges. */
  maxListens: number;
  /** Calls waiting for a pooled upstream session at most; one more is answered -32603 at once. */
  poolMaxQueued: number;
  /** SSE events kept per Streamable HTTP session for `Last-Event-ID` resumption; 0: no event ids. */
  eventStoreMax: number;
  /** Comment heartbeat period on SSE streams. */
  heartbeatMs: number;
  /** Time-to-live of a parked MRTR call (modern client, legacy server). */
  requestStateTtlMs: number;
  /** HMAC key for sealed requestState; random per start when absent. */
  requestStateKey?: string;
  /** Bounded MRTR rounds toward a modern server (legacy client). */
  maxInputRounds: number;
  /** How long a legacy client has to answer one bridged server→client request. */
  inputTimeoutMs: number;
  /** Absent: an unreachable upstream at start fails at once. Otherwise probe again with backoff for this long (`Infinity`: until it answers). */
  waitForUpstreamMs?: number;
  /** On SIGTERM, how long calls in flight may run on before everything is closed. */
  shutdownTimeoutMs: number;
  /** Serve `GET /debug/stats` (pool, children, parked calls, sessions) on the HTTP face. */
  debugStats: boolean;
  /** Tool-name globs: when any is given, only matching tools are listed and callable (`--allow-tool`, `allowTools`). */
  allowTools?: string[];
  /** Tool-name globs hidden from every client whatever allowTools says (`--deny-tool`, `denyTools`). */
  denyTools?: string[];
  /** OAuth toward a URL upstream that answers 401 (issue 12); absent: none (a command upstream, or a static `Authorization` header). */
  oauth?: OAuthConfig;
  /** Origins that get CORS (`--cors-origin`; `*` any, only with authentication); they pass the Origin check too. */
  corsOrigins: string[];
  /** Prometheus metrics; `GET /metrics` on the main port behind its auth, or on `metricsListen` without. */
  metrics: boolean;
  /** Serve `/metrics` on its own listener, without auth, instead of the main port. */
  metricsListen?: { host: string; port: number };
  /** Replicas behind one load balancer (issue 16): absent, the bridge stands alone. */
  cluster?: ClusterConfig;
}

/** `--cluster-*`: how peers reach this replica, who the peers are, and the shared secret. */
export interface ClusterConfig {
  self: string;
  /** A fixed list of peer base URLs... */
  peers?: string[];
  /** ...or a DNS name (a headless Service) resolved again every few seconds. */
  dns?: string;
  /** ≥ 32 bytes; authenticates the internal route and derives the requestState key. */
  secret: string;
  /** On SIGTERM, how long at least the replica answers /healthz 503 and hands new work on before it stops listening. */
  handoffMs: number;
}

/** Default of `--cluster-handoff`: long enough for a load balancer's health checks to take the replica out. */
export const DEFAULT_CLUSTER_HANDOFF_MS = 5_000;

export const DEFAULT_OPTIONS: Omit<BridgeOptions, 'upstream' | 'logger'> = {
  upstreamEpoch: 'auto',
  listen: { host: '127.0.0.1', port: 8808 },
  stdio: false,
  allowOrigins: [],
  allowHosts: [],
  allowUnauthenticated: false,
  poolMax: 8,
  poolIdleMs: 60_000,
  sessionIdleMs: 30 * 60_000,
  callTimeoutMs: 5 * 60_000,
  probeTimeoutMs: 3_000,
  maxBodyBytes: 4 * 1024 * 1024,
  maxHeaderBytes: 16 * 1024,
  maxLineBytes: 16 * 1024 * 1024,
  maxJsonDepth: 64,
  maxSessions: 1000,
  maxParkedCalls: 1000,
  maxListens: 1000,
  poolMaxQueued: 1000,
  eventStoreMax: 1000,
  heartbeatMs: 15_000,
  requestStateTtlMs: 5 * 60_000,
  maxInputRounds: 10,
  inputTimeoutMs: 10 * 60_000,
  shutdownTimeoutMs: 10_000,
  debugStats: false,
  corsOrigins: [],
  metrics: true,
};
