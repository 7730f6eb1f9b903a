#!/usr/bin/env node
// The client under test in the suite's client scenarios is the bridge: this
// driver starts it in front of the scenario's server and drives it with an
// official SDK client, so every check the scenario makes is about what the
// bridge sent upstream.
//   node client-driver.mjs legacy|modern|stdio <scenario server url>
// `legacy` is SDK v1 (initialize over Streamable HTTP), `modern` is SDK v2
// pinned to 2026-07-28, `stdio` is SDK v1 on the bridge's stdio face (how a
// desktop client runs it). In `auth/*` scenarios the bridge is the OAuth
// client: it gets an --oauth-dir of its own and a BROWSER that follows the
// authorization redirect (follow-redirect-browser.mjs). The suite sets MCP_CONFORMANCE_SCENARIO and, for some
// scenarios, MCP_CONFORMANCE_CONTEXT (the exact tool calls to make).
// Exit code: 0 only when every step (connect, list, call, read, get) worked;
// the suite fails a non-zero exit unless the scenario allows client errors.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BRIDGE_BIN, startBridge, stop } from './processes.mjs';

const [mode, rawUrl] = process.argv.slice(2);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};
// The suite's mock servers are bound to 127.0.0.1 by the loopback preload; name it so.
// Not in auth scenarios: the protected-resource metadata names `localhost`, and the resource must match the URL (RFC 9728 §3.3).
const AUTH = scenario.startsWith('auth/');
const upstreamUrl = AUTH ? rawUrl : rawUrl?.replace('//localhost:', '//127.0.0.1:');
/** The client id metadata document URL the suite's CIMD scenario expects. */
const CIMD_URL = 'https://conformance-test.local/client-metadata.json';

const log = (...args) => process.stderr.write(`[driver ${mode}] ${args.join(' ')}\n`);


/** An answer for an elicitation form: the schema's defaults, else a plausible value per type. */
function fillForm(schema) {
  const content = {};
  for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
    if (prop.default !== undefined) content[name] = prop.default;
    else if (prop.type === 'boolean') content[name] = true;
    else if (prop.type === 'number' || prop.type === 'integer') content[name] = 1;
    else if (prop.type === 'array') content[name] = [prop.items?.enum?.[0] ?? prop.items?.anyOf?.[0]?.const ?? 'x'];
    else content[name] = prop.enum?.[0] ?? prop.oneOf?.[0]?.const ?? 'driver';
  }
  return content;
}

const HANDLERS = {
  'elicitation/create': (params) => ({ action: 'accept', content: fillForm(params?.requestedSchema) }),
  'sampling/createMessage': () => ({ role: 'assistant', content: { type: 'text', text: 'driver sample' }, model: 'driver-model', stopReason: 'endTurn' }),
  'roots/list': () => ({ roots: [{ uri: 'file:///driver/root', name: 'driver' }] }),
};

/** Arguments for a tool from its input schema: a=2, b=3 for the suite's add_numbers, simple values otherwise. */
function argsFor(schema) {
  const args = {};
  const numbers = { a: 2, b: 3 };
  for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
    if (prop.type === 'number' || prop.type === 'integer') args[name] = numbers[name] ?? 1;
    else if (prop.type === 'boolean') args[name] = true;
    else if (prop.type === 'string') args[name] = prop.enum?.[0] ?? 'test';
  }
  return args;
}

/** An SDK v1 client that declares and answers elicitation, sampling and roots. */
async function v1Client(name) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const types = await import('@modelcontextprotocol/sdk/types.js');
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } });
  client.setRequestHandler(types.ElicitRequestSchema, (req) => HANDLERS['elicitation/create'](req.params));
  client.setRequestHandler(types.CreateMessageRequestSchema, (req) => HANDLERS['sampling/createMessage'](req.params));
  client.setRequestHandler(types.ListRootsRequestSchema, (req) => HANDLERS['roots/list'](req.params));
  return client;
}

async function legacyClient(url) {
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const client = await v1Client('conformance-driver-v1');
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

async function modernClient(url) {
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  const client = new Client(
    { name: 'conformance-driver-v2', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {}, roots: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  for (const [method, handler] of Object.entries(HANDLERS)) client.setRequestHandler(method, (req) => handler(req.params));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** Steps that failed: any makes the driver exit 1, which the suite counts unless the scenario allows client errors. */
const failedSteps = [];

/** Runs one step; a failed step is logged and recorded, and the drive goes on so the scenario's checks see the rest. */
async function step(label, fn) {
  try {
    return await fn();
  } catch (err) {
    log(`${label} failed: ${err.message}`);
    failedSteps.push(label);
    return undefined;
  }
}

/** The scenario's explicit tool calls (MCP_CONFORMANCE_CONTEXT). */
async function explicitCalls(client) {
  await step('tools/list', () => client.listTools());
  for (const call of context.toolCalls) await step(`tools/call ${call.name}`, () => client.callTool({ name: call.name, arguments: call.arguments ?? {} }));
}

/** Scenarios with a contract of their own; every other one gets `exerciseAll`. */
const DRIVES = {
  // The mock serves only tools/list; the check is that nothing dereferences the schema's $ref.
  'json-schema-ref-no-deref': (client) => step('tools/list', () => client.listTools()),
  // Echo the inputSchema as listed: the scenario diffs it against what it served.
  'json-schema-2020-12-preservation': async (client) => {
    const tools = (await step('tools/list', () => client.listTools()))?.tools ?? [];
    const focal = tools.find((t) => t.name === 'json_schema_2020_12_tool');
    if (focal) await step('tools/call json_schema_echo', () => client.callTool({ name: 'json_schema_echo', arguments: { schema: focal.inputSchema } }));
    else {
      log('json_schema_2020_12_tool is not listed');
      failedSteps.push('find json_schema_2020_12_tool');
    }
  },
};

/** Every tool, resource and prompt the server lists, each called once. */
async function exerciseAll(client) {
  const tools = (await step('tools/list', () => client.listTools()))?.tools ?? [];
  for (const tool of tools) await step(`tools/call ${tool.name}`, () => client.callTool({ name: tool.name, arguments: argsFor(tool.inputSchema) }));
  const caps = client.getServerCapabilities() ?? {};
  if (caps.resources) {
    const resources = (await step('resources/list', () => client.listResources()))?.resources ?? [];
    for (const r of resources) await step(`resources/read ${r.uri}`, () => client.readResource({ uri: r.uri }));
  }
  if (caps.prompts) {
    const prompts = (await step('prompts/list', () => client.listPrompts()))?.prompts ?? [];
    for (const p of prompts) {
      const args = Object.fromEntries((p.arguments ?? []).map((a) => [a.name, 'test']));
      await step(`prompts/get ${p.name}`, () => client.getPrompt({ name: p.name, arguments: args }));
    }
  }
}

/** The bridge's --oauth-* flags for an auth scenario, from the credentials the suite hands over. */
function oauthFlags(dir) {
  process.env.BROWSER = path.join(path.dirname(new URL(import.meta.url).pathname), 'follow-redirect-browser.mjs');
  const flags = ['--oauth-dir', dir, '--oauth-timeout', '15000', '--oauth-client-metadata-url', CIMD_URL];
  if (context.client_id) flags.push('--oauth-client-id', context.client_id);
  if (context.client_secret) flags.push('--oauth-client-secret', context.client_secret);
  if (context.private_key_pem) {
    const pem = path.join(dir, 'client-key.pem');
    writeFileSync(pem, context.private_key_pem, { mode: 0o600 });
    flags.push('--oauth-private-key', pem);
  }
  if (scenario.startsWith('auth/client-credentials')) flags.push('--oauth-grant', 'client_credentials');
  return flags;
}

/** SDK v1 on the bridge's stdio face: the bridge is the client's child, as a desktop client runs it. */
async function stdioClient(extraFlags) {
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const level = process.env.CONFORMANCE_BRIDGE_LOG_LEVEL ?? 'warn';
  const client = await v1Client('conformance-driver-stdio');
  const transport = new StdioClientTransport({ command: process.execPath, args: [BRIDGE_BIN, '--stdio', '--log-level', level, ...extraFlags, '--upstream', upstreamUrl], env: process.env, stderr: 'inherit' });
  await client.connect(transport);
  return client;
}

async function main() {
  if (!['legacy', 'modern', 'stdio'].includes(mode) || !upstreamUrl) {
    process.stderr.write('usage: client-driver.mjs legacy|modern|stdio <server url>\n');
    process.exit(2);
  }
  const dir = AUTH ? mkdtempSync(path.join(os.tmpdir(), 'mcp-bridge-conformance-oauth-')) : undefined;
  const extra = dir ? oauthFlags(dir) : [];
  if (mode === 'stdio') {
    let code = 0;
    let client;
    try {
      client = await stdioClient(extra);
      await (Array.isArray(context.toolCalls) ? explicitCalls : (DRIVES[scenario] ?? exerciseAll))(client);
      if (failedSteps.length > 0) {
        log(`${failedSteps.length} step(s) failed: ${failedSteps.join(', ')}`);
        code = 1;
      }
    } catch (err) {
      log(`connect failed: ${err.message}`);
      code = 1;
    } finally {
      await client?.close().catch(() => undefined);
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
    process.exit(code);
  }
  let bridge;
  try {
    bridge = await startBridge(['--upstream', upstreamUrl], extra);
  } catch (err) {
    log(`the bridge did not start: ${err.message}`);
    if (dir) rmSync(dir, { recursive: true, force: true });
    process.exit(1);
  }
  let client;
  let code = 0;
  try {
    client = await (mode === 'legacy' ? legacyClient : modernClient)(bridge.url);
    const drive = Array.isArray(context.toolCalls) ? explicitCalls : (DRIVES[scenario] ?? exerciseAll);
    await drive(client);
    if (failedSteps.length > 0) {
      log(`${failedSteps.length} step(s) failed: ${failedSteps.join(', ')}`);
      code = 1;
    }
  } catch (err) {
    log(`connect failed: ${err.message}`);
    code = 1;
  } finally {
    await client?.close().catch(() => undefined);
    await stop(bridge.proc);
    // Kept by the suite in the scenario's stderr.txt: the bridge's warnings explain most failures.
    if (bridge.proc.stderr.trim()) process.stderr.write(`--- bridge stderr ---\n${bridge.proc.stderr}\n`);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
  process.exit(code);
}

await main();
