#!/usr/bin/env node
import { Command, CommanderError, Option } from 'commander';
import { BridgeError } from '../src/errors.js';
import { configFromFlags, upstreamFrom, type CliFlags } from '../src/daemon/config-from-flags.js';
import { probeJson, probeText } from '../src/daemon/probe-report.js';
import { startBridge, type RunningBridge } from '../src/daemon/start-bridge.js';
import { probeUpstream } from '../src/epochs/probe-upstream.js';
import { createLogger } from '../src/log.js';
import { DEFAULT_OPTIONS as D } from '../src/daemon/options.js';
import { BRIDGE_VERSION } from '../src/version.js';

const EXIT_OK = 0;
const EXIT_UPSTREAM = 1;
const EXIT_USAGE = 2;

const collect = (value: string, previous: string[] = []) => [...previous, value];

const program = new Command('mcp-bridge')
  .description('Lets any MCP client talk to any MCP server, whatever protocol epoch each side speaks.')
  .version(BRIDGE_VERSION)
  .usage('[options] [--upstream <url> | -- <command> [args...]]')
  .argument('[command...]', 'a stdio server to spawn, after --')
  .option('--upstream <url>', 'an HTTP(S) or WS(S) upstream server URL, e.g. http://127.0.0.1:3001/mcp')
  .option('--listen <host:port>', 'where the HTTP faces listen (default 127.0.0.1:8808; port 0 picks one)')
  .option('--stdio', 'serve one client on stdin/stdout instead of HTTP (how desktop clients launch it)')
  .addOption(new Option('--upstream-epoch <epoch>', 'trust this epoch instead of detecting it').choices(['auto', 'modern', 'initialize', 'http+sse']).default('auto'))
  .option('--header <Name: value>', 'header added to every upstream HTTP request (repeatable, never logged)', collect)
  .option('--allow-origin <origin>', 'an Origin allowed besides loopback ones (repeatable)', collect)
  .addOption(new Option('--log-level <level>', 'stderr log level').choices(['debug', 'info', 'warn', 'error', 'silent']))
  .option('--pool-max <n>', `upstream legacy sessions (stdio: child processes) at most (default ${D.poolMax})`)
  .option('--pool-idle <ms>', `close an idle pooled upstream session after this long (default ${D.poolIdleMs})`)
  .option('--session-idle <ms>', `close an idle downstream legacy session after this long (default ${D.sessionIdleMs})`)
  .option('--call-timeout <ms>', `cancel an upstream call that takes longer (default ${D.callTimeoutMs})`)
  .option('--probe-timeout <ms>', `how long a stdio server gets to answer the server/discover probe (default ${D.probeTimeoutMs})`)
  .option('--max-body <bytes>', `largest accepted HTTP request body (default ${D.maxBodyBytes})`)
  .option('--request-state-ttl <ms>', `lifetime of a parked MRTR call, modern client and legacy server (default ${D.requestStateTtlMs})`)
  .option('--request-state-key <key>', 'HMAC key (≥ 32 bytes) for sealed requestState; env MCP_BRIDGE_REQUEST_STATE_KEY; random per start if unset')
  .option('--max-input-rounds <n>', `MRTR rounds at most toward a modern server, legacy client (default ${D.maxInputRounds})`)
  .option('--input-timeout <ms>', `how long a legacy client has to answer a bridged server→client request (default ${D.inputTimeoutMs})`)
  .addHelpText('after', `
Examples:
  mcp-bridge                                   wrap the bundled reference server, serve http://127.0.0.1:8808/mcp
  mcp-bridge -- npx -y @modelcontextprotocol/server-everything stdio
                                               put a stdio server on HTTP for every epoch of client
  mcp-bridge --upstream http://127.0.0.1:3001/mcp --listen 127.0.0.1:9000
                                               front a URL
  mcp-bridge --stdio --upstream https://example.com/mcp --header 'Authorization: Bearer …'
                                               an HTTP server on stdio, for a desktop client
  mcp-bridge probe --json http://127.0.0.1:3001/mcp
                                               print a server's epoch, versions and capabilities

Exit codes: 0 clean shutdown, 1 upstream unreachable or not MCP at start, 2 bad usage.`)
  .showHelpAfterError('(run mcp-bridge --help for every flag)')
  .exitOverride()
  .action(async (command: string[], flags: CliFlags) => {
    const options = configFromFlags(flags, command);
    const bridge = await startBridge(options);
    if (bridge.url) process.stderr.write(`mcp-bridge: serving ${bridge.facts.epoch} upstream at ${bridge.url}/mcp (http+sse: ${bridge.url}/sse, ws: ${bridge.url.replace(/^http/, 'ws')}/ws)\n`);
    handleSignals(bridge);
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

function handleSignals(bridge: RunningBridge): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(EXIT_OK);
    stopping = true;
    process.stderr.write(`mcp-bridge: ${signal}, shutting down\n`);
    void bridge.close();
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
