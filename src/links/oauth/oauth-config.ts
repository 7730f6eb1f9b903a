import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BridgeError } from '../../errors.js';
import { algorithmOf } from './bridge-oauth-provider.js';

/** How the bridge authorizes itself toward a protected upstream (issue 12); the CLI fills it from `--oauth-*` flags. */
export interface OAuthConfig {
  /** Where tokens and registrations are kept (`--oauth-dir`, env MCP_BRIDGE_OAUTH_DIR). */
  dir: string;
  /** Pre-registered client (`--oauth-client-id`); without it: a metadata document URL, else dynamic registration. */
  clientId?: string;
  /** `--oauth-client-secret` or env MCP_BRIDGE_OAUTH_CLIENT_SECRET; never logged. */
  clientSecret?: string;
  /** A Client ID Metadata Document URL (`--oauth-client-metadata-url`), used when the server supports one. */
  clientMetadataUrl?: string;
  /** The loopback callback port; absent: one derived from the upstream URL. */
  callbackPort?: number;
  /** `--oauth-scope`: wins over the challenge's and the metadata's scopes. */
  scope?: string;
  /** `--oauth-resource`: the RFC 8707 resource to ask for, instead of the one the metadata names. */
  resource?: string;
  /** `authorization_code` (a browser), or `client_credentials` for unattended daemons. */
  grant: 'authorization_code' | 'client_credentials';
  /** A PEM private key for private_key_jwt client authentication (`--oauth-private-key`). */
  privateKeyPem?: string;
  /** Only print the authorization URL (`--oauth-no-browser`). */
  noBrowser: boolean;
  /** How long to wait for the browser's callback (`--oauth-timeout`). */
  timeoutMs: number;
  /** How many 403 insufficient_scope step-ups one request may cause. */
  maxStepUps: number;
  /** What names this upstream to `mcp-bridge login`/`logout` in hints (a config server: `--config <file> --server <name>`); default its URL. */
  commandTarget?: string;
}

export const DEFAULT_OAUTH_DIR = path.join(os.homedir(), '.mcp-bridge', 'oauth');

export const DEFAULT_OAUTH: OAuthConfig = {
  dir: DEFAULT_OAUTH_DIR,
  grant: 'authorization_code',
  noBrowser: false,
  timeoutMs: 300_000,
  maxStepUps: 2,
};

/** The `--oauth-*` flags as commander hands them over. */
export interface OAuthFlags {
  oauthDir?: string;
  oauthClientId?: string;
  oauthClientSecret?: string;
  oauthClientMetadataUrl?: string;
  oauthCallbackPort?: string;
  oauthScope?: string;
  oauthResource?: string;
  oauthGrant?: string;
  oauthPrivateKey?: string;
  oauthNoBrowser?: boolean;
  oauthTimeout?: string;
}

const usage = (message: string) => new BridgeError('BRIDGE_ERR_USAGE', message);

/** Flags over defaults; a combination that cannot work is refused with what to do instead. */
export function oauthConfigFrom(flags: OAuthFlags, env: NodeJS.ProcessEnv = process.env): OAuthConfig {
  const cfg: OAuthConfig = { ...DEFAULT_OAUTH, dir: flags.oauthDir ?? (env.MCP_BRIDGE_OAUTH_DIR || DEFAULT_OAUTH.dir) };
  cfg.dir = path.resolve(cfg.dir);
  if (flags.oauthClientId !== undefined) cfg.clientId = flags.oauthClientId;
  const secret = flags.oauthClientSecret ?? (env.MCP_BRIDGE_OAUTH_CLIENT_SECRET || undefined);
  if (secret !== undefined) {
    if (cfg.clientId === undefined) throw usage('--oauth-client-secret (or MCP_BRIDGE_OAUTH_CLIENT_SECRET) belongs to a pre-registered client: add --oauth-client-id');
    cfg.clientSecret = secret;
  }
  if (flags.oauthClientMetadataUrl !== undefined) {
    let u: URL | undefined;
    try {
      u = new URL(flags.oauthClientMetadataUrl);
    } catch {
      u = undefined;
    }
    if (!u || u.protocol !== 'https:' || u.pathname === '/') throw usage(`--oauth-client-metadata-url must be an https URL with a path (got '${flags.oauthClientMetadataUrl}')`);
    cfg.clientMetadataUrl = u.href;
  }
  if (flags.oauthCallbackPort !== undefined) {
    const port = Number(flags.oauthCallbackPort);
    if (!Number.isInteger(port) || port < 1 || port > 65_535) throw usage(`--oauth-callback-port must be a port number 1-65535 (got '${flags.oauthCallbackPort}')`);
    cfg.callbackPort = port;
  }
  if (flags.oauthScope !== undefined) cfg.scope = flags.oauthScope.split(/[\s,]+/).filter(Boolean).join(' ');
  if (flags.oauthResource !== undefined) {
    try {
      new URL(flags.oauthResource);
    } catch {
      throw usage(`--oauth-resource must be an absolute URI (got '${flags.oauthResource}')`);
    }
    cfg.resource = flags.oauthResource;
  }
  const grant = flags.oauthGrant ?? 'authorization_code';
  if (grant !== 'authorization_code' && grant !== 'client_credentials') throw usage(`--oauth-grant must be authorization_code or client_credentials (got '${grant}')`);
  cfg.grant = grant;
  if (flags.oauthPrivateKey !== undefined) {
    if (cfg.clientId === undefined) throw usage('--oauth-private-key signs assertions for a pre-registered client: add --oauth-client-id');
    try {
      cfg.privateKeyPem = readFileSync(flags.oauthPrivateKey, 'utf8');
      algorithmOf(cfg.privateKeyPem);
    } catch (err) {
      throw usage(`--oauth-private-key must name a PEM private key file (${(err as Error).message})`);
    }
  }
  if (grant === 'client_credentials' && (cfg.clientId === undefined || (cfg.clientSecret === undefined && cfg.privateKeyPem === undefined))) {
    throw usage('--oauth-grant client_credentials needs --oauth-client-id and either --oauth-client-secret (or MCP_BRIDGE_OAUTH_CLIENT_SECRET) or --oauth-private-key <pem file>');
  }
  cfg.noBrowser = flags.oauthNoBrowser ?? false;
  if (flags.oauthTimeout !== undefined) {
    const ms = Number(flags.oauthTimeout);
    if (!Number.isInteger(ms) || ms < 1) throw usage(`--oauth-timeout must be a whole number of milliseconds ≥ 1 (got '${flags.oauthTimeout}')`);
    cfg.timeoutMs = ms;
  }
  return cfg;
}
