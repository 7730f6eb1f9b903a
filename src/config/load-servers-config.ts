import { readFileSync } from 'node:fs';
import { configFromFlags, type CliFlags } from '../daemon/config-from-flags.js';
import type { BridgeOptions, UpstreamTarget } from '../daemon/options.js';
import { BridgeError } from '../errors.js';
import { createLogger, defaultLogFormat, type LogFormat, type LogLevel } from '../log.js';
import { oauthConfigFrom, type OAuthFlags } from '../links/oauth/oauth-config.js';
import { parseServersConfig, type ServerEntry, type ServersConfig } from './servers-config.js';

/** Reads and checks a config file; every problem is BRIDGE_ERR_USAGE naming the file (and the place in it). */
export function loadServersConfig(file: string, env: NodeJS.ProcessEnv = process.env): ServersConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new BridgeError('BRIDGE_ERR_USAGE', `cannot read config file ${file}: ${(err as Error).message}`, { cause: err });
  }
  return parseServersConfig(text, file, env);
}

/** Flags that name one upstream: with --config each server's entry says these. */
const PER_SERVER_FLAGS: Array<[keyof CliFlags, string, string]> = [
  ['upstream', '--upstream', '"url"'],
  ['header', '--header', '"headers"'],
  ['allowTool', '--allow-tool', '"allowTools"'],
  ['denyTool', '--deny-tool', '"denyTools"'],
  ['oauthClientId', '--oauth-client-id', '"oauth": {"clientId": …}'],
  ['oauthClientSecret', '--oauth-client-secret', '"oauth": {"clientSecret": "${VAR}"}'],
  ['oauthClientMetadataUrl', '--oauth-client-metadata-url', '"oauth": {"clientMetadataUrl": …}'],
  ['oauthCallbackPort', '--oauth-callback-port', '"oauth": {"callbackPort": …}'],
  ['oauthScope', '--oauth-scope', '"oauth": {"scope": …}'],
  ['oauthResource', '--oauth-resource', '"oauth": {"resource": …}'],
  ['oauthGrant', '--oauth-grant', '"oauth": {"grant": …}'],
  ['oauthPrivateKey', '--oauth-private-key', '"oauth": {"privateKey": …}'],
];

/** The OAuth flags that are the daemon's in config mode (every server's tokens in one directory). */
const DAEMON_OAUTH_FLAGS = ['oauthDir', 'oauthNoBrowser', 'oauthTimeout'] as const;

/**
 * The daemon's options for a config file: its `"bridge"` object under the
 * command-line flags (flags win), checked as flags are. The logger scrubs every
 * server's header values, URL passwords and env values besides the token and key;
 * `secrets` is its live list, so a reload can add the new entries' values.
 */
export function optionsFromConfig(config: ServersConfig, flags: CliFlags, command: string[], env: NodeJS.ProcessEnv = process.env): { options: BridgeOptions; secrets: string[] } {
  if (command.length > 0) throw new BridgeError('BRIDGE_ERR_USAGE', '--config names the servers; leave out the command after --');
  for (const [key, flag, entryKey] of PER_SERVER_FLAGS) {
    if (flags[key] !== undefined) throw new BridgeError('BRIDGE_ERR_USAGE', `with --config, give ${flag} per server as ${entryKey} in its entry`);
  }
  const fromFile: CliFlags = { ...config.bridge };
  // A desktop client that launches `--stdio` is the only client; the file's HTTP credentials do not apply.
  if (flags.stdio) {
    for (const key of ['authToken', 'auth', 'authIssuer', 'authAudience', 'authJwksUrl', 'authRequiredScope', 'authIntrospectionUrl', 'authIntrospectionClientId', 'forwardHeader'] as const) delete fromFile[key];
  }
  const merged: CliFlags = { ...fromFile, ...definedOnly(flags) };
  // The daemon's OAuth settings apply to the servers, not to the bundled server configFromFlags falls back to.
  const oauthFlags: OAuthFlags = {};
  for (const key of DAEMON_OAUTH_FLAGS) {
    if (merged[key] !== undefined) Object.assign(oauthFlags, { [key]: merged[key] });
    delete merged[key];
  }
  let options: BridgeOptions;
  try {
    options = configFromFlags(merged, [], env);
    // MCP_BRIDGE_OAUTH_CLIENT_SECRET belongs to a single upstream: each server names its own secret.
    options.oauth = oauthConfigFrom(oauthFlags, { MCP_BRIDGE_OAUTH_DIR: env.MCP_BRIDGE_OAUTH_DIR });
  } catch (err) {
    if (err instanceof BridgeError) throw new BridgeError('BRIDGE_ERR_USAGE', `${err.message} (from the command line or ${config.file} "bridge")`, { cause: err });
    throw err;
  }
  checkServersAgainst(config, options);
  const secrets = [options.authToken, options.requestStateKey].filter((s): s is string => s !== undefined);
  secrets.push(...serverSecrets(config.servers));
  const level = (merged.logLevel ?? env.MCP_BRIDGE_LOG_LEVEL ?? 'info') as LogLevel;
  const format = (merged.logFormat ?? env.MCP_BRIDGE_LOG_FORMAT ?? defaultLogFormat()) as LogFormat;
  return { options: { ...options, logger: createLogger(level, {}, undefined, secrets, format) }, secrets };
}

/**
 * What the file's servers may not ask of this daemon: with `--auth
 * pass-through` each client's own token goes upstream, so a server's `"oauth"`
 * (the bridge's own credentials) cannot apply. Checked at start and on reload.
 */
export function checkServersAgainst(config: ServersConfig, options: BridgeOptions): void {
  if (options.clientAuth?.mode !== 'pass-through') return;
  const withOAuth = config.servers.find((s) => s.oauth !== undefined && s.oauth !== false);
  if (withOAuth) throw new BridgeError('BRIDGE_ERR_USAGE', `${config.file}: mcpServers.${withOAuth.name}.oauth: "auth": "pass-through" sends each client's own token upstream, so the bridge's own OAuth cannot apply; use one or the other`);
}

/** Values of the entries that no log line may show. */
export function serverSecrets(servers: ServerEntry[]): string[] {
  const out: string[] = [];
  for (const s of servers) {
    out.push(...targetSecrets(s.upstream));
    if (s.oauth && s.oauth.oauthClientSecret) out.push(s.oauth.oauthClientSecret);
  }
  return out;
}

function targetSecrets(t: UpstreamTarget): string[] {
  if (t.kind === 'command') return Object.values(t.env ?? {});
  const out: string[] = [];
  for (const value of Object.values(t.headers)) {
    out.push(value);
    const credential = /^\S+\s+(\S.*)$/.exec(value)?.[1];
    if (credential) out.push(credential);
  }
  const password = new URL(t.url).password;
  if (password) out.push(decodeURIComponent(password), password);
  return out;
}

function definedOnly(flags: CliFlags): CliFlags {
  return Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)) as CliFlags;
}
