import { EPOCHS } from '../epochs/versions.js';
import { BridgeError } from '../errors.js';
import { isValidAuthToken } from '../faces/auth.js';
import { isLoopbackHost, parseHostHeader } from '../faces/host-check.js';
import { clientAuthFromFlags, type ClientAuthFlags } from '../identity/client-auth-config.js';
import { oauthConfigFrom, type OAuthFlags } from '../links/oauth/oauth-config.js';
import { createLogger, defaultLogFormat, LOG_FORMATS, LOG_LEVELS, maskUrlCredentials, type LogFormat, type LogLevel } from '../log.js';
import { clusterFrom } from './cluster-from-flags.js';
import { bundledReferenceServer } from './bundled-server.js';
import { DEFAULT_OPTIONS, type BridgeOptions, type UpstreamTarget } from './options.js';

/** The CLI's flags as commander hands them over (strings and arrays, unvalidated). */
export interface CliFlags extends OAuthFlags, ClientAuthFlags {
  upstream?: string;
  listen?: string;
  stdio?: boolean;
  upstreamEpoch?: string;
  header?: string[];
  allowOrigin?: string[];
  allowHost?: string[];
  authToken?: string;
  allowUnauthenticated?: boolean;
  logLevel?: string;
  poolMax?: string;
  poolIdle?: string;
  sessionIdle?: string;
  callTimeout?: string;
  probeTimeout?: string;
  maxBody?: string;
  maxHeaderSize?: string;
  maxLine?: string;
  maxJsonDepth?: string;
  maxSessions?: string;
  maxParked?: string;
  maxListens?: string;
  maxQueued?: string;
  eventStoreMax?: string;
  requestStateTtl?: string;
  requestStateKey?: string;
  maxInputRounds?: string;
  inputTimeout?: string;
  /** `true` for the bare flag (wait without limit), else milliseconds. */
  waitForUpstream?: string | boolean;
  shutdownTimeout?: string;
  debugStats?: boolean;
  /** Tool-name globs (repeatable): only matching tools are listed and callable. */
  allowTool?: string[];
  /** Tool-name globs (repeatable): matching tools are hidden. */
  denyTool?: string[];
  corsOrigin?: string[];
  metricsListen?: string;
  /** False with `--no-metrics`. */
  metrics?: boolean;
  logFormat?: string;
  clusterSelf?: string;
  /** Comma-separated base URLs. */
  clusterPeers?: string;
  clusterDns?: string;
  clusterSecret?: string;
  clusterHandoff?: string;
}

const usage = (message: string) => new BridgeError('BRIDGE_ERR_USAGE', message);

/**
 * Turns flags and the words after `--` into BridgeOptions: defaults first,
 * then flags; conflicting or malformed flags throw BRIDGE_ERR_USAGE with a
 * message that says what to do instead.
 */
export function configFromFlags(flags: CliFlags, command: string[], env: NodeJS.ProcessEnv = process.env): BridgeOptions {
  const logLevel = (flags.logLevel ?? env.MCP_BRIDGE_LOG_LEVEL ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw usage(`--log-level must be one of ${LOG_LEVELS.join(', ')} (got '${logLevel}')`);
  const epoch = flags.upstreamEpoch ?? 'auto';
  if (epoch !== 'auto' && !(EPOCHS as readonly string[]).includes(epoch)) {
    throw usage(`--upstream-epoch must be auto, ${EPOCHS.join(', ')} (got '${epoch}')`);
  }
  const requestStateKey = flags.requestStateKey ?? env.MCP_BRIDGE_REQUEST_STATE_KEY;
  if (requestStateKey !== undefined && Buffer.byteLength(requestStateKey) < 32) {
    throw usage('--request-state-key must be at least 32 bytes long (or leave it out for a random key per start)');
  }
  const upstream = upstreamFrom(flags, command);
  const stdio = flags.stdio ?? false;
  const cluster = clusterFrom(flags, env, { stdio, requestStateKey });
  const listen = (flags.listen ?? env.MCP_BRIDGE_LISTEN) ? parseListen((flags.listen ?? env.MCP_BRIDGE_LISTEN)!) : DEFAULT_OPTIONS.listen;
  const authToken = authTokenFrom(flags, env, stdio);
  const allowUnauthenticated = flags.allowUnauthenticated ?? false;
  const clientAuth = clientAuthFromFlags(flags, { authToken, stdio, upstreamIsUrl: upstream.kind === 'url' || (flags.upstream === undefined && command.length === 0), otherFlags: flags as Record<string, unknown>, env });
  if (!stdio && authToken === undefined && clientAuth === undefined && !allowUnauthenticated && !isLoopbackHost(listen.host)) {
    throw usage(
      `refusing to listen on ${listen.host} without authentication: anyone who can reach it could drive the upstream. ` +
        'Set --auth-token <token> (or MCP_BRIDGE_AUTH_TOKEN), listen on 127.0.0.1, or pass --allow-unauthenticated if something in front of the bridge authenticates',
    );
  }
  if (stdio && flags.corsOrigin?.length) throw usage('--cors-origin is for browsers calling the HTTP faces; with --stdio there are none, so leave it out');
  const corsOrigins = corsOriginsFrom(flags.corsOrigin ?? [], authToken);
  const logFormat = (flags.logFormat ?? env.MCP_BRIDGE_LOG_FORMAT ?? defaultLogFormat()) as LogFormat;
  if (!LOG_FORMATS.includes(logFormat)) throw usage(`--log-format must be one of ${LOG_FORMATS.join(', ')} (got '${logFormat}')`);
  const metrics = flags.metrics ?? true;
  if (!metrics && flags.metricsListen !== undefined) throw usage('--metrics-listen serves the metrics that --no-metrics turns off; pass one or the other');
  for (const h of flags.allowHost ?? []) {
    if (h !== '*' && parseHostHeader(h) === undefined) throw usage(`--allow-host must be a host name, name:port or * (got '${h}')`);
  }
  const oauth = oauthFor(flags, env, upstream, clientAuth?.mode === 'pass-through');
  return {
    ...DEFAULT_OPTIONS,
    upstream,
    oauth,
    upstreamEpoch: epoch as BridgeOptions['upstreamEpoch'],
    listen,
    stdio,
    allowOrigins: flags.allowOrigin ?? [],
    allowHosts: flags.allowHost ?? [],
    authToken: clientAuth === undefined ? authToken : undefined,
    allowUnauthenticated,
    clientAuth,
    maxSessionsPerPrincipal: flags.maxSessionsPerPrincipal === undefined ? undefined : int(flags.maxSessionsPerPrincipal, '--max-sessions-per-principal', 0, 1),
    maxParkedPerPrincipal: flags.maxParkedPerPrincipal === undefined ? undefined : int(flags.maxParkedPerPrincipal, '--max-parked-per-principal', 0, 1),
    logger: createLogger(logLevel, {}, undefined, secretsOf(upstream, authToken, requestStateKey, oauth?.clientSecret, cluster?.secret, clientAuth?.mode === 'jwt' ? clientAuth.introspectionClientSecret : undefined), logFormat),
    poolMax: int(flags.poolMax, '--pool-max', DEFAULT_OPTIONS.poolMax, 1),
    poolIdleMs: int(flags.poolIdle, '--pool-idle', DEFAULT_OPTIONS.poolIdleMs, 0),
    sessionIdleMs: int(flags.sessionIdle, '--session-idle', DEFAULT_OPTIONS.sessionIdleMs, 1),
    callTimeoutMs: int(flags.callTimeout, '--call-timeout', DEFAULT_OPTIONS.callTimeoutMs, 1),
    probeTimeoutMs: int(flags.probeTimeout, '--probe-timeout', DEFAULT_OPTIONS.probeTimeoutMs, 1),
    maxBodyBytes: int(flags.maxBody, '--max-body', DEFAULT_OPTIONS.maxBodyBytes, 1),
    maxHeaderBytes: int(flags.maxHeaderSize, '--max-header-size', DEFAULT_OPTIONS.maxHeaderBytes, 1024),
    maxLineBytes: int(flags.maxLine, '--max-line', DEFAULT_OPTIONS.maxLineBytes, 1024),
    maxJsonDepth: int(flags.maxJsonDepth, '--max-json-depth', DEFAULT_OPTIONS.maxJsonDepth, 8),
    maxSessions: int(flags.maxSessions, '--max-sessions', DEFAULT_OPTIONS.maxSessions, 1),
    maxParkedCalls: int(flags.maxParked, '--max-parked', DEFAULT_OPTIONS.maxParkedCalls, 1),
    maxListens: int(flags.maxListens, '--max-listens', DEFAULT_OPTIONS.maxListens, 1),
    poolMaxQueued: int(flags.maxQueued, '--max-queued', DEFAULT_OPTIONS.poolMaxQueued, 0),
    eventStoreMax: int(flags.eventStoreMax, '--event-store-max', DEFAULT_OPTIONS.eventStoreMax, 0),
    requestStateTtlMs: int(flags.requestStateTtl, '--request-state-ttl', DEFAULT_OPTIONS.requestStateTtlMs, 1),
    requestStateKey,
    maxInputRounds: int(flags.maxInputRounds, '--max-input-rounds', DEFAULT_OPTIONS.maxInputRounds, 1),
    inputTimeoutMs: int(flags.inputTimeout, '--input-timeout', DEFAULT_OPTIONS.inputTimeoutMs, 1),
    waitForUpstreamMs: flags.waitForUpstream === undefined ? undefined : flags.waitForUpstream === true ? Infinity : int(String(flags.waitForUpstream), '--wait-for-upstream', 0, 1),
    shutdownTimeoutMs: int(flags.shutdownTimeout, '--shutdown-timeout', DEFAULT_OPTIONS.shutdownTimeoutMs, 0),
    debugStats: flags.debugStats ?? false,
    allowTools: flags.allowTool,
    denyTools: flags.denyTool,
    corsOrigins,
    metrics,
    metricsListen: flags.metricsListen === undefined ? undefined : parseListen(flags.metricsListen, '--metrics-listen'),
    ...(cluster ? { cluster } : {}),
  };
}

/** `--cors-origin`: http(s) origins, or `*`, which only an authenticated bridge may offer (any page could drive it otherwise). */
function corsOriginsFrom(raw: string[], authToken: string | undefined): string[] {
  for (const origin of raw) {
    if (origin === '*') {
      if (authToken === undefined) throw usage('--cors-origin * lets every web page call the bridge: set --auth-token (or MCP_BRIDGE_AUTH_TOKEN) too, or name the origins');
      continue;
    }
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin.replace(/\/$/, '').toLowerCase()) {
      throw usage(`--cors-origin must be an origin such as https://app.example.com (scheme, host, optional port; no path), or * (got '${origin}')`);
    }
  }
  return raw;
}

/** `--auth-token`, else MCP_BRIDGE_AUTH_TOKEN; the flag makes no sense with --stdio (the env var is then ignored). */
function authTokenFrom(flags: CliFlags, env: NodeJS.ProcessEnv, stdio: boolean): string | undefined {
  if (stdio) {
    if (flags.authToken !== undefined) throw usage('--auth-token protects the HTTP faces; with --stdio the client is the process that started the bridge, so leave it out');
    return undefined;
  }
  const token = flags.authToken ?? (env.MCP_BRIDGE_AUTH_TOKEN || undefined);
  if (token !== undefined && !isValidAuthToken(token)) {
    throw usage('--auth-token must be at least 16 characters of A-Z a-z 0-9 - . _ ~ + / (for instance the output of: openssl rand -hex 32)');
  }
  return token;
}

/** Values no log line may show: upstream header values (and their credential part), a URL password, the token and the key. */
function secretsOf(upstream: UpstreamTarget, authToken: string | undefined, requestStateKey: string | undefined, clientSecret?: string, clusterSecret?: string, introspectionSecret?: string): string[] {
  const secrets = [authToken, requestStateKey, clientSecret, clusterSecret, introspectionSecret];
  if (upstream.kind === 'url') {
    for (const value of Object.values(upstream.headers)) secrets.push(value, /^\S+\s+(\S.*)$/.exec(value)?.[1]);
    const password = new URL(upstream.url).password;
    if (password) secrets.push(decodeURIComponent(password), password);
  }
  return secrets.filter((s): s is string => s !== undefined);
}

/**
 * OAuth applies to a URL upstream (issue 12) unless a static `--header Authorization` says what to send;
 * `--oauth-*` flags for an upstream that cannot use them are refused.
 */
function oauthFor(flags: CliFlags, env: NodeJS.ProcessEnv, upstream: UpstreamTarget, passThrough: boolean): BridgeOptions['oauth'] {
  const given = Object.entries(flags).some(([k, v]) => k.startsWith('oauth') && v !== undefined);
  if (upstream.kind !== 'url') {
    if (given) throw usage('--oauth-* flags apply to an --upstream URL; a command upstream is not authorized with OAuth');
    return undefined;
  }
  // Each client's own token goes upstream (--oauth-* with it is refused in client-auth-config.ts): a refused
  // one must reach that client as a 401, never start the bridge's own flow and go again under its identity.
  if (passThrough) return undefined;
  if (Object.keys(upstream.headers).some((h) => h.toLowerCase() === 'authorization')) {
    if (given) throw usage("--header 'Authorization: …' and --oauth-* both say how to authorize: keep one");
    return undefined;
  }
  return oauthConfigFrom(flags, env);
}

/** `--upstream URL`, or a command after `--`, or (neither) the bundled reference server. */
export function upstreamFrom(flags: Pick<CliFlags, 'upstream' | 'header'>, command: string[]): UpstreamTarget {
  const headers = parseHeaders(flags.header ?? []);
  if (flags.upstream !== undefined && command.length > 0) {
    throw usage('give either --upstream <url> or -- <command> [args...], not both');
  }
  if (flags.upstream !== undefined) {
    let url: URL;
    try {
      url = new URL(flags.upstream);
    } catch {
      throw usage(`--upstream must be an absolute URL such as http://127.0.0.1:3001/mcp (got '${maskUrlCredentials(flags.upstream)}')`);
    }
    if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) {
      throw usage(`--upstream must be an http(s):// or ws(s):// URL (got '${url.protocol}')`);
    }
    return { kind: 'url', url: url.href, headers };
  }
  if (Object.keys(headers).length > 0) throw usage('--header applies to an --upstream URL; a command upstream gets none');
  if (command.length > 0) return { kind: 'command', command: command[0], args: command.slice(1) };
  return bundledReferenceServer();
}

/** `Name: value` pairs; the value may contain colons. */
export function parseHeaders(raw: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of raw) {
    const i = h.indexOf(':');
    const name = i > 0 ? h.slice(0, i).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw usage(`--header must look like 'Name: value' (got '${h}')`);
    const value = h.slice(i + 1).trim();
    if (/[\r\n\0]/.test(value)) throw usage(`--header value for ${name} must not contain CR, LF or NUL`);
    headers[name] = value;
  }
  return headers;
}

/** `host:port`, `:port`, `port`, or `[v6]:port`. */
export function parseListen(raw: string, flag = '--listen'): { host: string; port: number } {
  const m = /^(?:(?:\[([^\]]+)\]|([^:[\]]*)):)?(\d+)$/.exec(raw.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw usage(`${flag} must be host:port, e.g. 127.0.0.1:8808 (got '${raw}')`);
  }
  return { host: m[1] ?? (m[2] || DEFAULT_OPTIONS.listen.host), port };
}

function int(raw: string | undefined, flag: string, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw usage(`${flag} must be a whole number ≥ ${min} (got '${raw}')`);
  return n;
}
