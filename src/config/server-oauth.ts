import path from 'node:path';
import type { Node } from 'jsonc-parser';
import { BridgeError } from '../errors.js';
import { oauthConfigFrom, type OAuthConfig, type OAuthFlags } from '../links/oauth/oauth-config.js';
import type { JsonPlace } from './json-place.js';

/**
 * The keys of a server's `"oauth"` object: the single-upstream CLI's
 * `--oauth-*` flags without the prefix, in camelCase (`clientId` for
 * `--oauth-client-id`), and how each is read. Where tokens live
 * (`oauthDir`) is the daemon's, in the `"bridge"` object.
 */
const OAUTH_KEYS = {
  clientId: 'string',
  clientSecret: 'string',
  clientMetadataUrl: 'string',
  callbackPort: 'integer',
  scope: 'scopes',
  resource: 'string',
  grant: 'string',
  privateKey: 'path',
  noBrowser: 'boolean',
  timeout: 'integer',
} as const;

type OAuthKey = keyof typeof OAUTH_KEYS;

const flagOf = (key: OAuthKey) => `oauth${key[0].toUpperCase()}${key.slice(1)}` as keyof OAuthFlags;

/**
 * A server entry's `"oauth"`: `false` turns the bridge's OAuth off for it,
 * `true` or an object turns it on (an object with its settings). Checked here
 * as the flags are (`oauthConfigFrom`), so a bad combination fails at the
 * file position; a relative `privateKey` is relative to the file.
 */
export function oauthFlagsFrom(p: JsonPlace, node: Node, where: string, file: string): OAuthFlags | false {
  if (node.type === 'boolean') return p.boolean(node, where) ? {} : false;
  const flags: Record<string, unknown> = {};
  for (const [key, value, keyNode] of p.props(p.object(node, `${where} (or true / false)`))) {
    const kind = OAUTH_KEYS[key as OAuthKey] as (typeof OAUTH_KEYS)[OAuthKey] | undefined;
    if (!kind) throw p.fail(keyNode, `unknown key "${key}" in ${where} (known: ${Object.keys(OAUTH_KEYS).join(', ')})`);
    const at = `${where}.${key}`;
    const flag = flagOf(key as OAuthKey);
    if (kind === 'boolean') flags[flag] = p.boolean(value, at);
    else if (kind === 'integer') flags[flag] = String(p.integer(value, at, 1));
    else if (kind === 'scopes') flags[flag] = value.type === 'array' ? p.strings(value, at).join(' ') : p.string(value, at);
    else if (kind === 'path') flags[flag] = path.resolve(path.dirname(file), p.string(value, at));
    else flags[flag] = p.string(value, at);
  }
  try {
    // An empty environment: MCP_BRIDGE_OAUTH_CLIENT_SECRET is the single upstream's; a server's secret is "clientSecret" ("${VAR}").
    oauthConfigFrom(flags as OAuthFlags, {});
  } catch (err) {
    if (err instanceof BridgeError) throw p.fail(node, `${where}: ${asKeys(err.message)}`);
    throw err;
  }
  return flags as OAuthFlags;
}

/** One server's OAuth: its own settings over the daemon's (`oauthDir`, `oauthNoBrowser`, `oauthTimeout`). */
export function serverOAuthConfig(flags: OAuthFlags, daemon: OAuthConfig): OAuthConfig {
  return oauthConfigFrom({ oauthDir: daemon.dir, oauthNoBrowser: daemon.noBrowser, oauthTimeout: String(daemon.timeoutMs), ...flags }, {});
}

/** A message about `--oauth-*` flags, told in the file's keys (`--oauth-client-id` → `"clientId"`). */
export function asKeys(message: string): string {
  return message
    .replace(/ \(or MCP_BRIDGE_OAUTH_CLIENT_SECRET\)/g, '')
    .replace(/--oauth-([a-z-]+)(?: <[^>]+>)?/g, (_whole, name: string) => `"${name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase())}"`);
}
