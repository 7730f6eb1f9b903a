#!/usr/bin/env node
import { Command, CommanderError, Option } from 'commander';
import { BridgeError } from '../src/errors.js';
import { configFromFlags, upstreamFrom, type CliFlags } from '../src/daemon/config-from-flags.js';
import { probeJson, probeText } from '../src/daemon/probe-report.js';
import { startBridge, type RunningBridge } from '../src/daemon/start-bridge.js';
import { optionsFor, startServers, type RunningServers } from '../src/daemon/start-servers.js';
import { checkServersAgainst, loadServersConfig, optionsFromConfig, serverSecrets } from '../src/config/load-servers-config.js';
import { probeUpstream } from '../src/epochs/probe-upstream.js';
import { oauthConfigFrom, type OAuthFlags } from '../src/links/oauth/oauth-config.js';
import { authStatusCommand, loginCommand, logoutCommand } from '../src/links/oauth/oauth-commands.js';
import { configAuthStatus, configOAuthTarget } from '../src/daemon/config-oauth-commands.js';
import { createLogger } from '../src/log.js';
import { DEFAULT_OPTIONS as D, type BridgeOptions } from '../src/daemon/options.js';
import { BRIDGE_VERSION } from '../src/version.js';

const EXIT_OK = 0;
const EXIT_UPSTREAM = 1;
const EXIT_USAGE = 2;

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The `--oauth-*` flags, on the daemon and on `login`. */
function oauthOptions(cmd: Command): Command {
  return cmd
    .option('--oauth-dir <dir>', 'where OAuth tokens and registrations are kept (env MCP_BRIDGE_OAUTH_DIR, default ~/.mcp-bridge/oauth)')
    .option('--oauth-client-id <id>', 'a pre-registered OAuth client id (else a metadata document URL, else dynamic registration)')
    .option('--oauth-client-secret <secret>', 'its secret; env MCP_BRIDGE_OAUTH_CLIENT_SECRET (preferred: argv is visible to other users)')
    .option('--oauth-client-metadata-url <url>', 'an https Client ID Metadata Document URL, used when the server supports them')
    .option('--oauth-callback-port <port>', 'the 127.0.0.1 port of the OAuth callback (default: derived from the upstream URL)')
    .option('--oauth-scope <scopes>', 'the scopes to ask for (default: the challenge\'s, else the server\'s scopes_supported)')
    .option('--oauth-resource <uri>', 'the RFC 8707 resource to ask for (default: the one the protected-resource metadata names)')
    .addOption(new Option('--oauth-grant <grant>', 'authorization_code (a browser) or client_credentials (unattended)').choices(['authorization_code', 'client_credentials']))
    .option('--oauth-private-key <pem file>', 'sign private_key_jwt client assertions with this key (with --oauth-client-id)')
    .option('--oauth-no-browser', 'only print the authorization URL on stderr (default: BROWSER, else the system opener)')
    .option('--oauth-timeout <ms>', 'how long to wait for the browser to come back (default 300000)');
}

const program = new Command('mcp-bridge')
  .description('Lets any MCP client talk to any MCP server, whatever protocol epoch each side speaks.')
  .version(BRIDGE_VERSION)
  .usage('[options] [--upstream <url> | --config <file> | -- <command> [args...]]')
  .argument('[command...]', 'a stdio server to spawn, after --')
  .option('--upstream <url>', 'an HTTP(S) or WS(S) upstream server URL, e.g. http://127.0.0.1:3001/mcp')
  .option('--config <file>', 'serve every server of a desktop-client config file ({"mcpServers": …}) at /servers/<name>/mcp; SIGHUP re-reads it')
  .option('--server <name>', 'with --config and --stdio: the one server to serve')
  .option('--allow-tool <glob>', 'only tools matching a glob are listed and callable (repeatable)', collect)
  .option('--deny-tool <glob>', 'tools matching a glob are hidden and refused -32602 (repeatable)', collect)
  .option('--listen <host:port>', 'where the HTTP faces listen (default 127.0.0.1:8808; port 0 picks one)')
  .option('--stdio', 'serve one client on stdin/stdout instead of HTTP (how desktop clients launch it)')
  .addOption(new Option('--upstream-epoch <epoch>', 'trust this epoch instead of detecting it').choices(['auto', 'modern', 'initialize', 'http+sse']).default('auto'))
  .option('--header <Name: value>', 'header added to every upstream HTTP request (repeatable, never logged)', collect)
  .option('--allow-origin <origin>', 'an Origin allowed besides loopback ones (repeatable)', collect)
  .option('--allow-host <host>', 'a Host name served besides localhost, IP literals and the listen host: name, name:port or * (repeatable)', collect)
  .option('--auth-token <token>', 'require Authorization: Bearer <token> on every HTTP face but /healthz; env MCP_BRIDGE_AUTH_TOKEN (preferred: argv is visible to other users)')
  .option('--allow-unauthenticated', 'allow listening on a non-loopback address without --auth-token (something in front must authenticate)')
  .addOption(new Option('--auth <mode>', 'how clients authenticate: none, token (--auth-token), jwt (the bridge is an OAuth resource server), pass-through (each client token goes upstream)').choices(['none', 'token', 'jwt', 'pass-through']))
  .option('--auth-issuer <url>', '--auth jwt: the authorization server tokens must come from (iss)')
  .option('--auth-audience <aud>', '--auth jwt: the audience tokens must name (aud), as a rule the bridge URL clients connect to')
  .option('--auth-jwks-url <url>', "--auth jwt: the issuer's keys (default: jwks_uri of its metadata)")
  .option('--auth-required-scope <scope>', '--auth jwt: a scope every token must carry, else 403 (repeatable)', collect)
  .option('--auth-introspection-url <url>', '--auth jwt: RFC 7662 introspection for tokens that are not JWTs; secret in env MCP_BRIDGE_AUTH_INTROSPECTION_SECRET')
  .option('--auth-introspection-client-id <id>', '--auth jwt: the bridge\'s client id at the introspection endpoint')
  .option('--forward-header <name>', '--auth pass-through: another client header sent upstream besides Authorization (repeatable)', collect)
  .option('--max-sessions-per-principal <n>', 'downstream sessions one client principal may hold at most; 503 beyond')
  .option('--max-parked-per-principal <n>', 'parked MRTR calls one client principal may hold at most')
  .addOption(new Option('--log-level <level>', 'stderr log level').choices(['debug', 'info', 'warn', 'error', 'silent']))
  .option('--pool-max <n>', `upstream legacy sessions (stdio: child processes) at most (default ${D.poolMax})`)
  .option('--pool-idle <ms>', `close an idle pooled upstream session after this long (default ${D.poolIdleMs})`)
  .option('--session-idle <ms>', `close an idle downstream legacy session after this long (default ${D.sessionIdleMs})`)
  .option('--call-timeout <ms>', `cancel an upstream call that takes longer (default ${D.callTimeoutMs})`)
  .option('--probe-timeout <ms>', `how long a stdio server gets to answer the server/discover probe (default ${D.probeTimeoutMs})`)
  .option('--max-body <bytes>', `largest accepted HTTP request body or WebSocket message (default ${D.maxBodyBytes})`)
  .option('--max-header-size <bytes>', `largest accepted HTTP request head, 431 beyond (default ${D.maxHeaderBytes})`)
  .option('--max-line <bytes>', `longest line read from the upstream (SSE, stdio) or a stdio client (default ${D.maxLineBytes})`)
  .option('--max-json-depth <n>', `deepest JSON nesting accepted from a client, 400 -32600 beyond (default ${D.maxJsonDepth})`)
  .option('--max-sessions <n>', `downstream legacy sessions at most, all transports; 503 beyond (default ${D.maxSessions})`)
  .option('--max-parked <n>', `parked MRTR calls at most, modern client and legacy server (default ${D.maxParkedCalls})`)
  .option('--max-listens <n>', `open listen streams at most (default ${D.maxListens})`)
  .option('--max-queued <n>', `calls waiting for a pooled upstream session at most (default ${D.poolMaxQueued})`)
  .option('--event-store-max <n>', `SSE events kept per Streamable HTTP session for Last-Event-ID resumption; 0: none (default ${D.eventStoreMax})`)
  .option('--request-state-ttl <ms>', `lifetime of a parked MRTR call, modern client and legacy server (default ${D.requestStateTtlMs})`)
  .option('--request-state-key <key>', 'HMAC key (≥ 32 bytes) for sealed requestState; env MCP_BRIDGE_REQUEST_STATE_KEY; random per start if unset')
  .option('--max-input-rounds <n>', `MRTR rounds at most toward a modern server, legacy client (default ${D.maxInputRounds})`)
  .option('--input-timeout <ms>', `how long a legacy client has to answer a bridged server→client request (default ${D.inputTimeoutMs})`)
  .option('--wait-for-upstream [ms]', 'if the upstream is unreachable at start, probe again with backoff (for ms, or until it answers) instead of exiting 1')
  .option('--shutdown-timeout <ms>', `on SIGTERM/SIGINT, how long calls in flight may finish before the bridge closes everything (default ${D.shutdownTimeoutMs})`)
  .option('--cors-origin <origin>', 'answer CORS for this browser origin (repeatable; * only with --auth-token); it passes the Origin check too', collect)
  .option('--metrics-listen <host:port>', 'serve GET /metrics there without auth (loopback unless a host is given) instead of on the main port behind its auth')
  .option('--no-metrics', 'no Prometheus metrics at all')
  .addOption(new Option('--log-format <format>', 'stderr line format (default: pretty on a terminal, json otherwise); env MCP_BRIDGE_LOG_FORMAT').choices(['pretty', 'json']))
  .option('--debug-stats', 'serve GET /debug/stats: pool, upstream children, parked calls, listens, sessions (same auth as /mcp)')
  .option('--cluster-self <url>', 'run as one replica of a cluster: the base URL the other replicas reach this one at')
  .option('--cluster-peers <url,...>', 'the replicas of the cluster (base URLs, this one may be among them)')
  .option('--cluster-dns <name>', 'instead of --cluster-peers: a DNS name (headless Service) whose addresses are the replicas, resolved again every 5 s')
  .option('--cluster-secret <secret>', 'shared by every replica (≥ 32 bytes): authenticates forwarding and derives the requestState key; env MCP_BRIDGE_CLUSTER_SECRET (preferred)')
  .option('--cluster-handoff <ms>', 'on SIGTERM, how long at least a replica answers /healthz 503 and hands new work to peers before it stops listening (default 5000)');
oauthOptions(program)
  .addHelpText('after', `
Examples:
  mcp-bridge                                   wrap the bundled reference server, serve http://127.0.0.1:8808/mcp
  mcp-bridge -- npx -y @modelcontextprotocol/server-everything stdio
                                               put a stdio server on HTTP for every epoch of client
  mcp-bridge --upstream http://127.0.0.1:3001/mcp --listen 127.0.0.1:9000
                                               front a URL
  mcp-bridge --stdio --upstream https://example.com/mcp --header 'Authorization: Bearer …'
                                               an HTTP server on stdio, for a desktop client
  MCP_BRIDGE_AUTH_TOKEN=$(openssl rand -hex 32) mcp-bridge --listen 0.0.0.0:8808 -- node server.js
                                               serve beyond loopback: clients send Authorization: Bearer <token>
  mcp-bridge --config ~/.config/Claude/claude_desktop_config.json
                                               every server of a desktop config at /servers/<name>/mcp (SIGHUP reloads)
  mcp-bridge --stdio --config servers.json --server tickets
                                               one server of the file, for a desktop client
  MCP_BRIDGE_CLUSTER_SECRET=… MCP_BRIDGE_AUTH_TOKEN=… mcp-bridge --listen 0.0.0.0:8808 --cluster-self http://10.0.0.5:8808 \\
      --cluster-peers http://10.0.0.5:8808,http://10.0.0.6:8808 -- node server.js
                                               one replica of several behind a load balancer (README: Scale-out)
  mcp-bridge probe --json http://127.0.0.1:3001/mcp
                                               print a server's epoch, versions and capabilities
  mcp-bridge login https://example.com/mcp     authorize with OAuth now (a 401 at any time does it too)
  mcp-bridge login --config servers.json --server tickets
                                               the same for one server of a config file, with its "oauth" settings

Exit codes: 0 clean shutdown, 1 upstream unreachable or not MCP at start, 2 bad usage.`)
  .showHelpAfterError('(run mcp-bridge --help for every flag)')
  .exitOverride()
  .action(async (command: string[], flags: CliFlags & { config?: string; server?: string }) => {
    if (flags.config !== undefined) {
      // commander sets `metrics: true` unless --no-metrics is given: only a flag the user typed overrides the file.
      const given = { ...flags };
      if (program.getOptionValueSource('metrics') === 'default') delete given.metrics;
      return serveConfig(flags.config, given, command);
    }
    if (flags.server !== undefined) throw new BridgeError('BRIDGE_ERR_USAGE', '--server picks one server of a --config file');
    const options = configFromFlags(flags, command);
    const bridge = await startBridge(options);
    if (bridge.url) process.stderr.write(startLine(bridge));
    handleSignals(bridge, options.shutdownTimeoutMs);
    await bridge.done;
    process.exitCode = EXIT_OK;
  });

program
  .command('probe')
  .description("detect a server's epoch, protocol version(s), serverInfo and capabilities")
  .argument('[target...]', 'a URL, or a command after --')
  .option('--json', 'print one JSON object')
  .option('--header <Name: value>', 'header added to every HTTP request (repeatable)', collect)
  .addOption(new Option('--upstream-epoch <epoch>', 'skip detection, use this epoch').choices(['auto', 'modern', 'initialize', 'http+sse']).default('auto'))
  .option('--probe-timeout <ms>', `stdio discover probe timeout (default ${D.probeTimeoutMs})`)
  .action(async (target: string[], flags: { json?: boolean; header?: string[]; upstreamEpoch: string; probeTimeout?: string }) => {
    if (target.length === 0) throw new BridgeError('BRIDGE_ERR_USAGE', 'probe needs a URL or -- <command> [args...]');
    const isUrl = /^(https?|wss?):\/\//i.test(target[0]) && target.length === 1;
    const upstream = upstreamFrom(isUrl ? { upstream: target[0], header: flags.header } : { header: flags.header }, isUrl ? [] : target);
    const logger = createLogger((process.env.MCP_BRIDGE_LOG_LEVEL as 'warn') ?? 'warn');
    const facts = await probeUpstream(upstream, { logger, timeoutMs: flags.probeTimeout ? Number(flags.probeTimeout) : D.probeTimeoutMs, epoch: flags.upstreamEpoch as 'auto' });
    process.stdout.write(flags.json ? JSON.stringify(probeJson(facts)) + '\n' : probeText(facts) + '\n');
  });

/** `--config`: every server on HTTP (SIGHUP re-reads the file), or with --stdio the one `--server` names. */
async function serveConfig(file: string, flags: CliFlags & { server?: string }, command: string[]): Promise<void> {
  const config = loadServersConfig(file);
  const { options, secrets } = optionsFromConfig(config, flags, command);
  if (flags.stdio) {
    const names = config.servers.map((s) => s.name);
    const name = flags.server ?? (names.length === 1 ? names[0] : undefined);
    const entry = config.servers.find((s) => s.name === name);
    if (!entry) throw new BridgeError('BRIDGE_ERR_USAGE', `--stdio --config serves one server: give --server <name>, one of ${names.join(', ') || '(none)'}${name ? ` (no server '${name}')` : ''}`);
    const bridge = await startBridge({ ...optionsFor(entry, options, file), stdio: true });
    handleSignals(bridge, options.shutdownTimeoutMs);
    await bridge.done;
    return;
  }
  if (flags.server !== undefined) throw new BridgeError('BRIDGE_ERR_USAGE', '--server applies with --stdio; over HTTP every server is served at /servers/<name>/mcp');
  const running = await startServers(config, options);
  const names = config.servers.map((s) => s.name);
  process.stderr.write(`mcp-bridge: serving ${names.length} servers at ${running.url}/servers/<name>/mcp (${names.join(', ')}); GET ${running.url}/servers lists them${running.metricsUrl ? `; metrics ${running.metricsUrl}` : ''}\n`);
  process.on('SIGHUP', () => reloadConfig(running, file, secrets, options));
  handleSignals(running, options.shutdownTimeoutMs);
  await running.done;
  // A server's OAuth flow may still wait for its browser (a callback listener and its timeout): the daemon is done, so end now.
  process.exit(EXIT_OK);
}

/** SIGHUP: a file that does not read, parse or validate leaves the running config as it is. */
function reloadConfig(running: RunningServers, file: string, secrets: string[], options: BridgeOptions): void {
  const logger = options.logger;
  try {
    const next = loadServersConfig(file);
    checkServersAgainst(next, options);
    for (const secret of serverSecrets(next.servers)) if (!secrets.includes(secret)) secrets.push(secret);
    const r = running.reload(next);
    process.stderr.write(`mcp-bridge: reloaded ${file}: added [${r.added.join(', ')}], removed [${r.removed.join(', ')}], changed [${r.changed.join(', ')}], kept [${r.kept.join(', ')}]${r.retried.length ? `, retried [${r.retried.join(', ')}]` : ''}\n`);
  } catch (err) {
    logger.warn('config.reload_failed', { file, error: (err as Error).message });
    process.stderr.write(`mcp-bridge: SIGHUP: kept the running config, ${(err as Error).message}\n`);
  }
}
oauthOptions(
  program
    .command('login')
    .description('run the OAuth flow toward an upstream URL (or a server of --config <file>, named by --server) now, and store its tokens')
    .argument('[url]', 'the upstream URL; with --config <file> --server <name>, that server'),
).action(async (url: string | undefined, _flags: CliFlags, cmd: Command) => {
  // The daemon's own --oauth-* options share these names: commander hands them to either.
  const flags = cmd.optsWithGlobals<ConfigFlags>();
  const logger = createLogger((process.env.MCP_BRIDGE_LOG_LEVEL as 'info') ?? 'warn');
  if (flags.config !== undefined) {
    const target = configTargetFor(flags, url, 'login');
    process.stderr.write((await loginCommand(target.where, target.oauth, logger)) + '\n');
    return;
  }
  process.stderr.write((await loginCommand(upstreamUrl(url, 'login'), oauthConfigFrom(flags), logger)) + '\n');
});

program
  .command('logout')
  .description('remove the OAuth tokens and registration stored for an upstream URL (or a server of --config <file>, named by --server)')
  .argument('[url]', 'the upstream URL; with --config <file> --server <name>, that server')
  .option('--oauth-dir <dir>', 'where they are kept (env MCP_BRIDGE_OAUTH_DIR, default ~/.mcp-bridge/oauth)')
  .action(async (url: string | undefined, _flags: OAuthFlags, cmd: Command) => {
    const flags = cmd.optsWithGlobals<ConfigFlags>();
    if (flags.config !== undefined) {
      const target = configTargetFor(flags, url, 'logout');
      process.stderr.write((await logoutCommand(target.where, target.oauth.dir)) + '\n');
      return;
    }
    process.stderr.write((await logoutCommand(upstreamUrl(url, 'logout'), oauthConfigFrom({ oauthDir: flags.oauthDir }).dir)) + '\n');
  });

program
  .command('auth')
  .description('OAuth state: `mcp-bridge auth status` lists upstreams with stored tokens (scopes, expiry; never a token); with --config <file>, each server of the file')
  .argument('<what>', 'status')
  .option('--oauth-dir <dir>', 'where they are kept (env MCP_BRIDGE_OAUTH_DIR, default ~/.mcp-bridge/oauth)')
  .action(async (what: string, _flags: OAuthFlags, cmd: Command) => {
    const flags = cmd.optsWithGlobals<ConfigFlags>();
    if (what !== 'status') throw new BridgeError('BRIDGE_ERR_USAGE', `mcp-bridge auth knows only: status (got '${what}')`);
    if (flags.config !== undefined) {
      const config = loadServersConfig(flags.config);
      process.stdout.write((await configAuthStatus(config, optionsFromConfig(config, flags, []).options, flags.server)) + '\n');
      return;
    }
    process.stdout.write((await authStatusCommand(oauthConfigFrom({ oauthDir: flags.oauthDir }).dir)) + '\n');
  });

type ConfigFlags = CliFlags & { config?: string; server?: string };

/** The URL argument of `login` / `logout`, checked. */
function upstreamUrl(url: string | undefined, command: string): string {
  if (url === undefined) throw new BridgeError('BRIDGE_ERR_USAGE', `${command} needs an upstream URL, or --config <file> --server <name>`);
  const upstream = upstreamFrom({ upstream: url }, []);
  if (upstream.kind !== 'url') throw new BridgeError('BRIDGE_ERR_USAGE', `${command} needs an upstream URL`);
  return upstream.url;
}

/** `login` / `logout --config f --server <name>`: that server, with the OAuth settings the daemon gives it. */
function configTargetFor(flags: ConfigFlags, url: string | undefined, command: string) {
  if (url !== undefined) throw new BridgeError('BRIDGE_ERR_USAGE', `${command}: give the upstream URL or --config <file> --server <name>, not both`);
  const config = loadServersConfig(flags.config!);
  return configOAuthTarget(config, optionsFromConfig(config, flags, []).options, flags.server);
}

/** What was found upstream and where to connect, for the person who started the bridge. */
function startLine(bridge: RunningBridge): string {
  const f = bridge.facts;
  const server = f.serverInfo ? ` ${f.serverInfo.name}${f.serverInfo.version ? ` ${f.serverInfo.version}` : ''}` : '';
  const url = bridge.url!;
  // The first line keeps its shape: scripts and tests read the URL from it.
  return (
    `mcp-bridge: serving ${f.epoch} upstream at ${url}/mcp (http+sse: ${url}/sse, ws: ${url.replace(/^http/, 'ws')}/ws)\n` +
    `mcp-bridge: upstream${server} speaks ${f.protocolVersion} over ${f.transport}; health ${url}/healthz, readiness ${url}/readyz` +
    `${bridge.metricsUrl ? `, metrics ${bridge.metricsUrl}` : ''}\n`
  );
}

/** First signal: graceful stop within `graceMs`; second: close now (children still get EOF, SIGTERM, SIGKILL); third: exit. */
function handleSignals(bridge: Pick<RunningBridge | RunningServers, 'close'>, graceMs: number): void {
  let signals = 0;
  const stop = (signal: string) => {
    signals++;
    if (signals > 2) process.exit(EXIT_UPSTREAM);
    process.stderr.write(signals === 1 ? `mcp-bridge: ${signal}, shutting down (calls in flight get up to ${graceMs} ms)\n` : `mcp-bridge: ${signal} again, closing now\n`);
    void bridge.close(signals === 1 ? graceMs : 0);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  if (err instanceof BridgeError) return err.code === 'BRIDGE_ERR_USAGE' ? EXIT_USAGE : EXIT_UPSTREAM;
  return EXIT_UPSTREAM;
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  const code = exitCodeFor(err);
  if (!(err instanceof CommanderError)) process.stderr.write(`mcp-bridge: ${err instanceof Error ? err.message : String(err)}\n`);
  if (code === EXIT_USAGE && !(err instanceof CommanderError)) process.stderr.write('(run mcp-bridge --help for every flag)\n');
  process.exit(code);
}
