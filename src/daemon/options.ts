import type { Epoch } from '../epochs/versions.js';
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
  logger: Logger;
  /** Upper bound of upstream legacy sessions (children for stdio) per capability set. */
  poolMax: number;
  /** An idle pooled upstream session (or child) is closed after this long. */
  poolIdleMs: number;
  /** An idle downstream legacy session is closed after this long. */
  sessionIdleMs: number;
  /** A call to the upstream that takes longer is cancelled and answered with an error. */
  callTimeoutMs: number;
  /** How long detection waits for a stdio server's answer to the `server/discover` probe. */
  probeTimeoutMs: number;
  /** Largest accepted HTTP request body. */
  maxBodyBytes: number;
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
}

export const DEFAULT_OPTIONS: Omit<BridgeOptions, 'upstream' | 'logger'> = {
  upstreamEpoch: 'auto',
  listen: { host: '127.0.0.1', port: 8808 },
  stdio: false,
  allowOrigins: [],
  poolMax: 8,
  poolIdleMs: 60_000,
  sessionIdleMs: 30 * 60_000,
  callTimeoutMs: 5 * 60_000,
  probeTimeoutMs: 3_000,
  maxBodyBytes: 4 * 1024 * 1024,
  heartbeatMs: 15_000,
  requestStateTtlMs: 5 * 60_000,
  maxInputRounds: 10,
  inputTimeoutMs: 10 * 60_000,
};
