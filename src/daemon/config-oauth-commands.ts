import type { ServersConfig } from '../config/servers-config.js';
import { BridgeError } from '../errors.js';
import { statusLine } from '../links/oauth/oauth-commands.js';
import type { OAuthConfig } from '../links/oauth/oauth-config.js';
import { TokenStore } from '../links/oauth/token-store.js';
import type { BridgeOptions } from './options.js';
import { optionsFor } from './start-servers.js';

/** One server of a config file as `login`, `logout` and `auth status --config` see it. */
export interface ConfigOAuthTarget {
  name: string;
  /** The upstream URL, or the command of a stdio server. */
  where: string;
  /** Its OAuth settings; absent when it has none (a command, `"oauth": false`, a static Authorization header). */
  oauth?: OAuthConfig;
}

/** Every server of the file with the OAuth it runs with (the same `optionsFor` the daemon uses). */
export function configOAuthTargets(config: ServersConfig, options: BridgeOptions): ConfigOAuthTarget[] {
  return config.servers.map((entry) => {
    const opts = optionsFor(entry, options, config.file);
    const t = entry.upstream;
    return { name: entry.name, where: t.kind === 'url' ? t.url : [t.command, ...t.args].join(' '), ...(opts.oauth ? { oauth: opts.oauth } : {}) };
  });
}

/**
 * `login` / `logout --config f --server <name>`: the named server, which must
 * have OAuth. `--server` may be left out when exactly one server has it.
 */
export function configOAuthTarget(config: ServersConfig, options: BridgeOptions, name: string | undefined): ConfigOAuthTarget & { oauth: OAuthConfig } {
  const all = configOAuthTargets(config, options);
  const withOAuth = all.filter((t): t is ConfigOAuthTarget & { oauth: OAuthConfig } => t.oauth !== undefined);
  if (name === undefined) {
    if (withOAuth.length === 1) return withOAuth[0];
    throw new BridgeError('BRIDGE_ERR_USAGE', `name the server with --server <name>, one of ${withOAuth.map((t) => t.name).join(', ') || `(no server of ${config.file} uses OAuth)`}`);
  }
  const target = all.find((t) => t.name === name);
  if (!target) throw new BridgeError('BRIDGE_ERR_USAGE', `${config.file} has no server '${name}' (servers: ${all.map((t) => t.name).join(', ') || 'none'})`);
  if (!target.oauth) throw new BridgeError('BRIDGE_ERR_USAGE', `server '${name}' of ${config.file} does not use OAuth (a command server, "oauth": false, or a static headers.Authorization)`);
  return target as ConfigOAuthTarget & { oauth: OAuthConfig };
}

/** `auth status --config f [--server name]`: one line per server: its stored tokens (scopes, expiry; never a token), none yet, or OAuth off. */
export async function configAuthStatus(config: ServersConfig, options: BridgeOptions, name?: string, now = Date.now()): Promise<string> {
  const targets = name === undefined ? configOAuthTargets(config, options) : [configOAuthTarget(config, options, name)];
  if (targets.length === 0) return `mcp-bridge: ${config.file} lists no servers`;
  const lines: string[] = [];
  for (const t of targets) {
    if (!t.oauth) {
      lines.push(`${t.name}  ${t.where}  OAuth off`);
      continue;
    }
    const record = await new TokenStore(t.oauth.dir, { upstream: t.where, resource: t.oauth.resource, clientId: t.oauth.clientId }).read();
    lines.push(record.tokens?.access_token ? `${t.name}  ${statusLine(record, now)}` : `${t.name}  ${t.where}  no stored tokens (a 401 runs the flow, or: mcp-bridge login ${t.oauth.commandTarget ?? t.where})`);
  }
  return lines.join('\n');
}
