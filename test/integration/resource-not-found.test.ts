import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { fromJsonSchema } from '@modelcontextprotocol/server';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';
import { startRecordingV1Server, startRecordingV2Server, type RecordingServer } from '../helpers/recording-servers.js';

/**
 * SEP-2164 through the built bridge with real servers: a 2026-07-28 client
 * reading a resource that does not exist hears -32602 with data.uri, whatever
 * the upstream said it with. SDK v1 servers (McpServer, server-everything) say
 * -32602 "Resource <uri> not found" without data; SDK v2 says -32602 with
 * data.uri itself. Errors that are not about the resource stay as they are.
 */

const V = '2026-07-28';
const MISSING = 'test://nonexistent-resource';

async function modernClient(bridge: RunningCli): Promise<Client> {
  const client = new Client({ name: 'nf-test', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: V } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${bridge.url}/mcp`)));
  return client;
}

/** The JSON-RPC error a call was answered with (the SDK client throws it as a ProtocolError). */
async function errorOf(p: Promise<unknown>): Promise<{ code?: number; message?: string; data?: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    return err as { code?: number; message?: string; data?: Record<string, unknown> };
  }
  throw new Error('expected the call to fail');
}

function registerV1(mcp: import('@modelcontextprotocol/sdk/server/mcp.js').McpServer): void {
  mcp.registerResource('here', 'test://here', { mimeType: 'text/plain' }, async (uri) => ({ contents: [{ uri: uri.href, text: 'here' }] }));
  mcp.registerResource('locked', new ResourceTemplate('test://locked/{id}', { list: undefined }), { mimeType: 'text/plain' }, async (uri) => {
    throw new McpError(ErrorCode.InvalidParams, `Resource ${uri.href} is locked`);
  });
}

describe('SDK v1 McpServer over Streamable HTTP (m2l)', () => {
  let upstream: RecordingServer;
  let bridge: RunningCli;
  let client: Client;
  beforeAll(async () => {
    upstream = await startRecordingV1Server(registerV1);
    bridge = await startCli(['--upstream', upstream.url]);
    client = await modernClient(bridge);
  });
  afterAll(async () => {
    await client?.close();
    await bridge?.close();
    await upstream?.close();
  });

  it('a missing resource is -32602 with data.uri, and the server message is kept', async () => {
    const err = await errorOf(client.readResource({ uri: MISSING }));
    expect(err.code).toBe(-32602);
    expect(err.data).toEqual({ uri: MISSING });
    expect(err.message).toContain(`Resource ${MISSING} not found`);
  });

  it('a resource that exists still reads', async () => {
    const result = await client.readResource({ uri: 'test://here' });
    expect(result.contents).toEqual([expect.objectContaining({ uri: 'test://here', text: 'here' })]);
  });

  it('a -32602 that names the URI but not its absence gets no data.uri', async () => {
    const err = await errorOf(client.readResource({ uri: 'test://locked/1' }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('Resource test://locked/1 is locked');
    expect(err.data).toBeUndefined();
  });
});

describe('server-everything over stdio (m2l)', () => {
  let bridge: RunningCli;
  let client: Client;
  beforeAll(async () => {
    bridge = await startCli(['--', ...EVERYTHING_STDIO_COMMAND]);
    client = await modernClient(bridge);
  });
  afterAll(async () => {
    await client?.close();
    await bridge?.close();
  });

  it('a URI no resource or template matches is -32602 with data.uri', async () => {
    const uri = 'nothing://here/at/all';
    const err = await errorOf(client.readResource({ uri }));
    expect(err.code).toBe(-32602);
    expect(err.data).toEqual({ uri });
  });
});

describe('SDK v2 McpServer (m2m)', () => {
  let upstream: RecordingServer;
  let bridge: RunningCli;
  let client: Client;
  beforeAll(async () => {
    upstream = await startRecordingV2Server((mcp) => {
      mcp.registerResource('here', 'test://here', { mimeType: 'text/plain' }, async (uri: URL) => ({ contents: [{ uri: uri.href, text: 'here' }] }));
      mcp.registerTool('echo', { inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } } }) }, async () => ({ content: [] }));
    });
    bridge = await startCli(['--upstream', upstream.url]);
    client = await modernClient(bridge);
  });
  afterAll(async () => {
    await client?.close();
    await bridge?.close();
    await upstream?.close();
  });

  it("the server's own -32602 with data.uri arrives as it was sent", async () => {
    const err = await errorOf(client.readResource({ uri: MISSING }));
    expect(err.code).toBe(-32602);
    expect(err.data).toMatchObject({ uri: MISSING });
    expect(upstream.methods).toContain('resources/read');
  });
});
