import { BridgeError } from '../errors.js';

/**
 * How clients authenticate to the bridge's HTTP faces (`--auth`), beyond the
 * static token (`authToken`, `--auth token`), which stays where it was.
 */
export type ClientAuthConfig =
  | {
      mode: 'jwt';
      issuer: string;
      audience: string;
      jwksUrl?: string;
      requiredScopes: string[];
      introspectionUrl?: string;
      /** The bridge's client id at the introspection endpoint; its secret comes from MCP_BRIDGE_AUTH_INTROSPECTION_SECRET. */
      introspectionClientId?: string;
      introspectionClientSecret?: string;
    }
  | { mode: 'pass-through'; forwardHeaders: string[] };

/** The flags that choose and shape client authentication (commander's camelCase names). */
export interface ClientAuthFlags {
  auth?: string;
  authToken?: string;
  authIssuer?: string;
  authAudience?: string;
  authJwksUrl?: string;
  authRequiredScope?: string[];
  authIntrospectionUrl?: string;
  authIntrospectionClientId?: string;
  forwardHeader?: string[];
  maxSessionsPerPrincipal?: string;
  maxParkedPerPrincipal?: string;
}

const usage = (message: string) => new BridgeError('BRIDGE_ERR_USAGE', message);

/** Headers the links write themselves (framing, content negotiation, MCP protocol headers). */
const BRIDGE_OWNED_HEADER = /^(host|connection|keep-alive|transfer-encoding|te|upgrade|content-length|content-type|content-encoding|accept|accept-encoding|last-event-id|mcp-.*|sec-websocket-.*)$/i;

/** The modes `--auth` accepts. */
const MODES = ['none', 'token', 'jwt', 'pass-through'] as const;

/**
 * Reads `--auth` and its companions; conflicting or missing pieces are usage
 * errors that say what to do. `authToken` is the token already read (flag or
 * env); `upstreamIsUrl` tells whether pass-through has an HTTP upstream to
 * pass to; `otherFlags` are every flag given, to refuse `--oauth-*` with
 * pass-through (the bridge must not add its own credentials to the client's).
 */
export function clientAuthFromFlags(
  flags: ClientAuthFlags,
  ctx: { authToken: string | undefined; stdio: boolean; upstreamIsUrl: boolean; otherFlags: Record<string, unknown>; env: NodeJS.ProcessEnv },
): ClientAuthConfig | undefined {
  const mode = flags.auth ?? (ctx.authToken !== undefined ? 'token' : 'none');
  if (!(MODES as readonly string[]).includes(mode)) throw usage(`--auth must be one of ${MODES.join(', ')} (got '${mode}')`);
  const jwtFlags = (['authIssuer', 'authAudience', 'authJwksUrl', 'authRequiredScope', 'authIntrospectionUrl', 'authIntrospectionClientId'] as const).filter((k) => flags[k] !== undefined);
  if (mode !== 'jwt' && jwtFlags.length > 0) throw usage(`--${kebab(jwtFlags[0])} belongs to --auth jwt (got --auth ${mode})`);
  if (mode !== 'pass-through' && flags.forwardHeader !== undefined) throw usage(`--forward-header belongs to --auth pass-through (got --auth ${mode})`);
  if (mode !== 'token' && mode !== 'none' && ctx.authToken !== undefined && flags.authToken !== undefined) throw usage(`--auth-token is the token mode; leave it out with --auth ${mode}`);
  if (mode !== 'none' && ctx.stdio) throw usage(`--auth protects the HTTP faces; with --stdio the client is the process that started the bridge, so leave it out`);
  if (mode === 'token' && ctx.authToken === undefined) throw usage('--auth token needs --auth-token <token> (or MCP_BRIDGE_AUTH_TOKEN)');
  if (mode === 'jwt') {
    if (flags.authIssuer === undefined || flags.authAudience === undefined) throw usage('--auth jwt needs --auth-issuer <url> and --auth-audience <aud> (the audience tokens must name: as a rule the bridge URL clients connect to)');
    for (const [flag, value] of [['--auth-issuer', flags.authIssuer], ['--auth-jwks-url', flags.authJwksUrl], ['--auth-introspection-url', flags.authIntrospectionUrl]] as const) {
      if (value !== undefined && !isHttpUrl(value)) throw usage(`${flag} must be an http(s) URL (got '${value}')`);
    }
    const secret = ctx.env.MCP_BRIDGE_AUTH_INTROSPECTION_SECRET || undefined;
    return {
      mode,
      issuer: flags.authIssuer,
      audience: flags.authAudience,
      jwksUrl: flags.authJwksUrl,
      requiredScopes: flags.authRequiredScope ?? [],
      introspectionUrl: flags.authIntrospectionUrl,
      introspectionClientId: flags.authIntrospectionClientId,
      introspectionClientSecret: secret,
    };
  }
  if (mode === 'pass-through') {
    const oauth = Object.keys(ctx.otherFlags).find((k) => /^oauth[A-Z]/.test(k) && ctx.otherFlags[k] !== undefined);
    if (oauth !== undefined) {
      throw usage(`--auth pass-through sends each client's own token upstream, so the bridge's own OAuth (--${kebab(oauth)}) cannot apply; use one or the other`);
    }
    if (!ctx.upstreamIsUrl) throw usage('--auth pass-through passes the client token to an HTTP upstream; a command upstream has none to pass it to');
    for (const h of flags.forwardHeader ?? []) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(h)) throw usage(`--forward-header must be a header name (got '${h}')`);
      // The bridge writes these itself for each upstream request: a client's value would break the protocol.
      if (BRIDGE_OWNED_HEADER.test(h)) throw usage(`--forward-header ${h}: the bridge sets that header itself toward the upstream; name an application header`);
    }
    return { mode, forwardHeaders: flags.forwardHeader ?? [] };
  }
  return undefined;
}

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
