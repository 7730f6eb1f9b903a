import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { loadServersConfig, serverSecrets } from '../config/load-servers-config.js';
import type { ServerEntry, ServersConfig } from '../config/servers-config.js';
import { upstreamFrom } from '../daemon/config-from-flags.js';
import { DEFAULT_OPTIONS, type BridgeOptions, type UpstreamTarget } from '../daemon/options.js';
import { ServerUnit, type ServerStatus } from '../daemon/server-unit.js';
import { optionsFor } from '../daemon/start-servers.js';
import { upstreamUrlOf } from '../daemon/upstream-url-of.js';
import { buildClientAuth } from '../faces/auth-build.js';
import { HttpFace } from '../faces/http-face.js';
import { ServerRoutes } from '../faces/server-routes.js';
import type { OAuthConfig } from '../links/oauth/oauth-config.js';
import { createLogger } from '../log.js';

/** What to bridge, and the daemon options that apply (`listen` and `stdio` do not: the app serves). */
export interface BridgeHandlerOptions {
  /** One upstream: its URL, or a target (`{ kind: 'command', command, args }`). Served at `<mount>/mcp`, `/sse`, `/ws`. */
  upstream?: string | UpstreamTarget;
  /** Or a config file (its path, or one already read): each server at `<mount>/servers/<name>/mcp`. */
  config?: string | ServersConfig;
  /** Options over DEFAULT_OPTIONS: authToken, allowOrigins, allowHosts (the app's own Host names), limits, tool filters. */
  options?: Partial<Omit<BridgeOptions, 'upstream' | 'stdio'>>;
}

/** A `(req, res)` handler serving a bridge inside an app's own node:http server (or any framework that hands those over). */
export interface BridgeHandler {
  (req: IncomingMessage, res: ServerResponse): void;
  /** WebSocket clients: call from the app server's `upgrade` event for `<mount>/ws` requests (`req.url` relative to the mount). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Resolves once every upstream has been probed (ready, or failed); until then its routes answer 503. */
  readonly ready: Promise<void>;
  servers(): ServerStatus[];
  /** Drains for up to `graceMs` (calls in flight finish), then closes sessions, bridges and children. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Builds a bridge as a plain request handler: the HTTP face's gate, routes and
 * units, with no server of its own. Paths are read from `req.url` as the
 * handler sees it; under express the mount path is `req.baseUrl` (kept in the
 * http+sse endpoint URL). A body an earlier middleware parsed is used as is.
 */
export function createBridgeHandler(opts: BridgeHandlerOptions): BridgeHandler {
  if ((opts.upstream === undefined) === (opts.config === undefined)) throw new TypeError('createBridgeHandler needs one of upstream or config');
  const config = typeof opts.config === 'string' ? loadServersConfig(opts.config) : opts.config;
  const entries: ServerEntry[] = config ? config.servers : [{ name: 'default', upstream: targetOf(opts.upstream!), fingerprint: '' }];
  const secrets = [opts.options?.authToken, opts.options?.requestStateKey, ...serverSecrets(entries)].filter((s): s is string => s !== undefined);
  const base: BridgeOptions = {
    ...DEFAULT_OPTIONS,
    ...opts.options,
    upstream: entries[0]?.upstream ?? targetOf('http://127.0.0.1/'),
    stdio: false,
    logger: opts.options?.logger ?? createLogger('info', {}, undefined, secrets),
  };
  const routes = new ServerRoutes({ named: config !== undefined, list: () => ({ servers: units.map((u) => u.status()) }) });
  const face = HttpFace.embedded({
    servers: routes,
    logger: base.logger.child({ side: 'face', embedded: true }),
    listen: { host: base.listen.host },
    allowOrigins: base.allowOrigins,
    allowHosts: base.allowHosts,
    authToken: base.authToken,
    auth: buildClientAuth(base.clientAuth, base.authToken, (path) => upstreamUrlOf(units, path)),
    maxSessionsPerPrincipal: base.maxSessionsPerPrincipal,
    maxBodyBytes: base.maxBodyBytes,
    maxJsonDepth: base.maxJsonDepth,
    maxSessions: base.maxSessions,
    heartbeatMs: base.heartbeatMs,
    sessionIdleMs: base.sessionIdleMs,
    inputTimeoutMs: base.inputTimeoutMs,
  });
  const units = entries.map((entry) => new ServerUnit(entry, embeddedOptions(entry, base, opts.options?.oauth), (handlers) => face.unit(handlers)));
  for (const unit of units) routes.set(unit.name, unit);
  const ready = Promise.all(units.map((u) => u.start())).then(() => undefined);
  let closing: Promise<void> | undefined;
  const handler = ((req: IncomingMessage, res: ServerResponse) => face.listener(req, res)) as BridgeHandler;
  return Object.assign(handler, {
    upgrade: face.upgrade,
    ready,
    servers: () => units.map((u) => u.status()),
    close: (graceMs = 0) =>
      (closing ??= (async () => {
        face.drain();
        for (const u of units) routes.delete(u.name);
        await Promise.allSettled(units.map((u) => u.stop(graceMs)));
        await face.close();
      })()),
  });
}

/**
 * A server's options inside an app: the daemon's, but OAuth toward the
 * upstream only when asked for (the entry's `"oauth"`, or `options.oauth`), so
 * an app's process never opens a browser because an upstream answered 401.
 */
function embeddedOptions(entry: ServerEntry, base: BridgeOptions, given: OAuthConfig | undefined): BridgeOptions {
  const opts = optionsFor(entry, base);
  // An entry's own settings go over options.oauth (its directory); without them, options.oauth as given.
  if (entry.oauth !== undefined && entry.oauth !== false) return opts;
  return { ...opts, oauth: given && opts.oauth ? given : undefined };
}

function targetOf(upstream: string | UpstreamTarget): UpstreamTarget {
  return typeof upstream === 'string' ? upstreamFrom({ upstream }, []) : upstream;
}
