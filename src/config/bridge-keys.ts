import type { CliFlags } from '../daemon/config-from-flags.js';

/** How a `"bridge"` key's value is read: a scalar, a boolean flag, a list (repeatable flag), or either (`--wait-for-upstream [ms]`). */
export type BridgeKeyKind = 'value' | 'flag' | 'list' | 'flag-or-value';

/**
 * The daemon options a config file's `"bridge"` object may set, named as the
 * CLI's long flags in camelCase. Per-upstream flags (`upstream`, `header`,
 * `upstreamEpoch`, tool filters) belong in each server's entry instead, and
 * `stdio` is how the bridge is launched, not configured.
 */
export const BRIDGE_KEYS: Partial<Record<keyof CliFlags, BridgeKeyKind>> & Record<string, BridgeKeyKind | undefined> = {
  listen: 'value',
  allowOrigin: 'list',
  allowHost: 'list',
  authToken: 'value',
  auth: 'value',
  authIssuer: 'value',
  authAudience: 'value',
  authJwksUrl: 'value',
  authRequiredScope: 'list',
  authIntrospectionUrl: 'value',
  authIntrospectionClientId: 'value',
  forwardHeader: 'list',
  maxSessionsPerPrincipal: 'value',
  maxParkedPerPrincipal: 'value',
  allowUnauthenticated: 'flag',
  logLevel: 'value',
  poolMax: 'value',
  poolIdle: 'value',
  sessionIdle: 'value',
  callTimeout: 'value',
  probeTimeout: 'value',
  maxBody: 'value',
  maxHeaderSize: 'value',
  maxLine: 'value',
  maxJsonDepth: 'value',
  maxSessions: 'value',
  maxParked: 'value',
  maxListens: 'value',
  maxQueued: 'value',
  requestStateTtl: 'value',
  requestStateKey: 'value',
  maxInputRounds: 'value',
  inputTimeout: 'value',
  waitForUpstream: 'flag-or-value',
  shutdownTimeout: 'value',
  debugStats: 'flag',
  corsOrigin: 'list',
  metricsListen: 'value',
  /** `"metrics": false` is `--no-metrics`. */
  metrics: 'flag',
  logFormat: 'value',
  // Where tokens are kept and how a browser flow runs, for every server; the rest of OAuth is per server ("oauth").
  oauthDir: 'value',
  oauthNoBrowser: 'flag',
  oauthTimeout: 'value',
};
