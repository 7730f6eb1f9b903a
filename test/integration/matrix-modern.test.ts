import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_COMMAND, startCli, type RunningCli } from '../helpers/cli.js';
import { MODERN_STDIO_COMMAND, startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';

/**
 * The modern half of the foundation matrix (issue 2, Tests): the SDK v2 client
 * pinned to 2026-07-28 over HTTP and stdio → the built CLI → the modern fixture
 * (SDK v2 server, modern-only) over HTTP and stdio.
 */

const V = '2026-07-28';
type Upstream = 'HTTP' | 'stdio';
type ClientSide = 'HTTP' | 'stdio';

const UPSTREAMS: Upstream[] = ['HTTP', 'stdio'];
const CLIENTS: ClientSide[] = ['HTTP', 'stdio'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 25 ms, at most `tries` times; every wait here is bounded. */
async function eventually(check: () => boolean, tries = 200): Promise<boolean> {
  for (let i = 0; i < tries && !check(); i++) await sleep(25);
  return check();
}

function textOf(result: unknown): string {
  return (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe.each(UPSTREAMS)('matrix: the modern fixture over %s', (upstreamKind) => {
  let fixture: RunningModernServer | undefined;
  let cli: RunningCli;
  let upstreamArgs: string[];

  beforeAll(async () => {
    if (upstreamKind === 'HTTP') fixture = await startModernHttpServer();
    upstreamArgs = fixture ? ['--upstream', fixture.url] : ['--', ...MODERN_STDIO_COMMAND];
    cli = await startCli(['--log-level', 'warn', ...upstreamArgs]);
  });

  afterAll(async () => {
    await cli?.close();
    await fixture?.close();
  });

  describe.each(CLIENTS)('SDK v2 client (pinned to 2026-07-28) over %s', (clientKind) => {
    const slug = `${upstreamKind}-${clientKind}`.toLowerCase();
    let client: Client;
    const elicitations: string[] = [];

    beforeAll(async () => {
      client = new Client({ name: `matrix-${slug}`, version: '1.0.0' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: V } } });
      client.setRequestHandler('elicitation/create', async (req) => {
        const message = req.params.message;
        elicitations.push(message);
        const content: Record<string, string | boolean> = message.startsWith('Is "') ? { ok: true } : { name: 'Ada' };
        return { action: 'accept' as const, content };
      });
      const transport =
        clientKind === 'HTTP'
          ? new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`))
          : new StdioClientTransport({ command: CLI_COMMAND[0], args: [...CLI_COMMAND.slice(1), '--stdio', '--log-level', 'warn', ...upstreamArgs], stderr: 'pipe' });
      await client.connect(transport);
    });

    afterAll(async () => {
      await client?.close();
    });

    it('discover: the modern era, the fixture’s serverInfo and capabilities', () => {
      expect(client.getNegotiatedProtocolVersion()).toBe(V);
      expect(client.getServerVersion()).toMatchObject({ name: 'modern-fixture', version: '1.0.0' });
      expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, resources: { subscribe: true } });
    });

    it('ask-name (MRTR): both input_required rounds reach the elicitation handler and the call completes', async () => {
      elicitations.length = 0;
      const result = await client.callTool({ name: 'ask-name', arguments: {} });
      expect(elicitations).toEqual(['What is your name?', 'Is "Ada" right?']);
      expect(textOf(result)).toBe('Hello, Ada!');
    });

    it(`tenant-echo: the server sees Mcp-Param-Region ${upstreamKind === 'HTTP' ? 'sent by the bridge' : 'as not applicable (stdio has no headers)'}`, async () => {
      await client.listTools();
      const result = await client.callTool({ name: 'tenant-echo', arguments: { region: 'eu-west', note: slug } });
      expect(result.structuredContent).toEqual({ region: 'eu-west', header: upstreamKind === 'HTTP' ? 'eu-west' : null });
    });

    it('subscriptions/listen: tools/list_changed arrives after add-tool', async () => {
      let changed = 0;
      client.setNotificationHandler('notifications/tools/list_changed', () => void changed++);
      const sub = await client.listen({ toolsListChanged: true });
      try {
        expect(sub.honoredFilter).toMatchObject({ toolsListChanged: true });
        const added = await client.callTool({ name: 'add-tool', arguments: { name: `added-${slug}` } });
        expect(textOf(added)).toBe(`added added-${slug}`);
        expect(await eventually(() => changed > 0)).toBe(true);
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).toContain(`added-${slug}`);
      } finally {
        await sub.close();
      }
    });
  });
});
