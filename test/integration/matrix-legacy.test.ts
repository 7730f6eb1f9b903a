import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResourceListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket as WsWebSocket } from 'ws';
import { CLI_COMMAND, startCli, type RunningCli } from '../helpers/cli.js';
import { EVERYTHING_STDIO_COMMAND, startEverything, type RunningServer } from '../helpers/processes.js';

// The SDK v1 WebSocket transport uses the global WebSocket, which Node 20 only has behind a flag.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WsWebSocket;

/**
 * The foundation matrix (issue 2, Tests): an SDK v1 client over each legacy
 * client transport → the built CLI → server-everything in each of its modes.
 * One bridge per upstream mode serves the three HTTP-side transports; the stdio
 * client launches its own `mcp-bridge --stdio` in front of the same upstream.
 */

type Mode = 'stdio' | 'sse' | 'streamableHttp';
type ClientTransport = 'Streamable HTTP' | 'http+sse' | 'WebSocket' | 'stdio';

const MODES: Mode[] = ['stdio', 'sse', 'streamableHttp'];
const CLIENT_TRANSPORTS: ClientTransport[] = ['Streamable HTTP', 'http+sse', 'WebSocket', 'stdio'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 25 ms, at most `tries` times; every wait here is bounded. */
async function eventually(check: () => boolean, tries = 200): Promise<boolean> {
  for (let i = 0; i < tries && !check(); i++) await sleep(25);
  return check();
}

/** The CLI arguments that name the upstream of one mode. */
function upstreamArgs(mode: Mode, server: RunningServer | undefined): string[] {
  if (mode === 'stdio') return ['--', ...EVERYTHING_STDIO_COMMAND];
  return ['--upstream', `${server!.url}${mode === 'sse' ? '/sse' : '/mcp'}`];
}

function clientTransport(kind: ClientTransport, cli: RunningCli, upstream: string[]): Transport {
  const byKind: Record<ClientTransport, () => Transport> = {
    'Streamable HTTP': () => new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`)),
    'http+sse': () => new SSEClientTransport(new URL(`${cli.url}/sse`)),
    WebSocket: () => new WebSocketClientTransport(new URL(`${cli.url.replace(/^http/, 'ws')}/ws`)),
    stdio: () =>
      new StdioClientTransport({ command: CLI_COMMAND[0], args: [...CLI_COMMAND.slice(1), '--stdio', '--log-level', 'warn', ...upstream], stderr: 'pipe' }),
  };
  return byKind[kind]();
}

/** Text of every text block of a tool result, joined. */
function textOf(result: unknown): string {
  return (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe.each(MODES)('matrix: server-everything in %s mode', (mode) => {
  let upstream: RunningServer | undefined;
  let cli: RunningCli;
  let args: string[];

  beforeAll(async () => {
    if (mode !== 'stdio') upstream = await startEverything(mode);
    args = upstreamArgs(mode, upstream);
    cli = await startCli(['--log-level', 'warn', ...args]);
  });

  afterAll(async () => {
    await cli?.close();
    await upstream?.close();
  });

  describe.each(CLIENT_TRANSPORTS)('SDK v1 client over %s', (transport) => {
    const slug = `${mode}-${transport.replace(/\W+/g, '-').toLowerCase()}`;
    const rootUri = `file:///matrix/${slug}`;
    let client: Client;
    let resourceListChanges = 0;
    const served = { elicitation: 0, sampling: 0, roots: 0 };

    beforeAll(async () => {
      client = new Client({ name: `matrix-${slug}`, version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } });
      client.setRequestHandler(ElicitRequestSchema, async () => {
        served.elicitation++;
        return { action: 'accept', content: { name: 'Ada' } };
      });
      client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
        served.sampling++;
        const first = req.params.messages[0]?.content as { type?: string; text?: string } | undefined;
        const prompt = first?.type === 'text' ? first.text : '';
        return { model: 'matrix-model', role: 'assistant', content: { type: 'text', text: `sampled <${prompt}>` } };
      });
      client.setRequestHandler(ListRootsRequestSchema, async () => {
        served.roots++;
        return { roots: [{ uri: rootUri, name: `root of ${slug}` }] };
      });
      client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => {
        resourceListChanges++;
      });
      await client.connect(clientTransport(transport, cli, args));
    });

    afterAll(async () => {
      await client?.close();
    });

    it('initialize: serverInfo is server-everything’s', () => {
      expect(client.getServerVersion()).toMatchObject({ name: 'mcp-servers/everything' });
      expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, resources: { listChanged: true } });
    });

    it('tools/list includes echo and the tools registered for the client’s capabilities', async () => {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining(['echo', 'trigger-elicitation-request', 'trigger-sampling-request', 'get-roots-list', 'trigger-long-running-operation', 'gzip-file-as-resource']),
      );
    });

    it('echo returns the message', async () => {
      const result = await client.callTool({ name: 'echo', arguments: { message: `hello ${slug}` } });
      expect(textOf(result)).toBe(`Echo: hello ${slug}`);
    });

    it('trigger-elicitation-request: the client’s elicitation handler answers and the tool sees the answer', async () => {
      const before = served.elicitation;
      const result = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
      expect(served.elicitation).toBe(before + 1);
      expect(textOf(result)).toContain('- Name: Ada');
    });

    it('trigger-sampling-request: the client’s sampling handler answers and the tool returns it', async () => {
      const before = served.sampling;
      const result = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: `prompt of ${slug}`, maxTokens: 20 } });
      expect(served.sampling).toBe(before + 1);
      expect(textOf(result)).toContain(`sampled <Resource trigger-sampling-request context: prompt of ${slug}>`);
      expect(textOf(result)).toContain('matrix-model');
    });

    it('get-roots-list: the server asked this client for its roots and lists its root URI', async () => {
      const result = await client.callTool({ name: 'get-roots-list', arguments: {} });
      expect(served.roots).toBeGreaterThan(0);
      expect(textOf(result)).toContain(`URI: ${rootUri}`);
    });

    it('trigger-long-running-operation: progress notifications reach onprogress before the result', async () => {
      const progress: number[] = [];
      const result = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 } }, undefined, {
        onprogress: (p) => void progress.push(p.progress),
      });
      expect(progress[0]).toBe(1);
      expect(progress).toEqual([...progress].sort((a, b) => a - b));
      expect(textOf(result)).toMatch(/Long running operation completed/i);
    });

    it('gzip-file-as-resource: the resources/list_changed notification reaches the client', async () => {
      const before = resourceListChanges;
      const result = await client.callTool({ name: 'gzip-file-as-resource', arguments: { name: `${slug}.txt.gz`, data: 'data:text/plain;base64,aGVsbG8=' } });
      expect(JSON.stringify(result.content)).toContain(`demo://resource/session/${slug}.txt.gz`);
      expect(await eventually(() => resourceListChanges > before)).toBe(true);
    });
  });
});
