import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type JSONRPCMessage,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, expect, it } from 'vitest';
import { waitFor } from './wait-for.js';

/**
 * A real SDK v1 client in front of the modern-only fixture through mcp-bridge,
 * and the feature tests every such client runs (bridge-l2m-e2e.test.ts and
 * accept-legacy-to-modern.test.ts).
 */

type Obj = Record<string, unknown>;

/** The text of a tool result's first content block. */
export const textOf = (r: unknown) => (r as { content: { text: string }[] }).content[0]?.text;

/** What a v1 client saw arrive unsolicited or alongside its calls. */
export interface Seen {
  toolsChanged: number;
  updated: string[];
  logs: { level: string; data: unknown }[];
  /** Every message the transport handed the client after connecting, in arrival order. */
  wire: JSONRPCMessage[];
}

export interface V1Connected {
  client: Client;
  seen: Seen;
}

/** A real SDK v1 client that declares elicitation, sampling and roots and answers the fixture's questions. */
export async function connectV1(transport: Transport, name = 'v1-e2e'): Promise<V1Connected> {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } });
  const seen: Seen = { toolsChanged: 0, updated: [], logs: [], wire: [] };
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    const message = req.params.message;
    if (message === 'What is your name?') return { action: 'accept', content: { name: 'Ada' } };
    if (message.startsWith('Is "Ada" right?')) return { action: 'accept', content: { ok: true } };
    if (message === 'Favourite colour?') return { action: 'accept', content: { color: 'teal' } };
    return { action: 'decline' };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'hi from v1' }, model: 'v1-model' }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///v1', name: 'v1' }] }));
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => void seen.toolsChanged++);
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => void seen.updated.push(n.params.uri));
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => void seen.logs.push({ level: n.params.level, data: n.params.data }));
  await client.connect(transport);
  // Observe the real transport: what it delivers, before the client's own handling.
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    seen.wire.push(message);
    deliver?.(message, extra);
  };
  return { client, seen };
}

export interface V1FeatureOptions {
  /** Distinguishes this client's added tool and log lines from every other's. */
  tag: string;
  /** Whether the upstream can see HTTP headers (HTTP upstreams only). */
  headerSeen: boolean;
  /** The message echoed by the tools/call case; 'v1' unless given. */
  echo?: string;
  /** Lists the tools before calling tenant-echo (the x-mcp-header case). */
  listToolsBeforeHeader?: boolean;
}

/** Every bridged feature, asserted through one connected v1 client. */
export function v1FeatureTests(get: () => V1Connected, opts: V1FeatureOptions): void {
  const { tag, headerSeen, echo = 'v1', listToolsBeforeHeader = false } = opts;
  let client: Client;
  let seen: Seen;
  beforeAll(() => {
    ({ client, seen } = get());
  });

  it('initialize succeeds with the upstream serverInfo and its capabilities', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'modern-fixture', version: '1.0.0' });
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, resources: { subscribe: true } });
  });

  it('tools/list and tools/call work', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'ask-name', 'ask-two', 'sample', 'tenant-echo']));
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: echo } }))).toBe(`Echo: ${echo}`);
  });

  it('elicitation through several MRTR rounds (ask-name)', async () => {
    expect(textOf(await client.callTool({ name: 'ask-name', arguments: {} }))).toBe('Hello, Ada!');
  });

  it('two inputs at once: elicitation and roots (ask-two)', async () => {
    expect(textOf(await client.callTool({ name: 'ask-two', arguments: {} }))).toBe('color=teal roots=file:///v1');
  });

  it('sampling (sample)', async () => {
    expect(textOf(await client.callTool({ name: 'sample', arguments: { prompt: 'hey' } }))).toBe('sampled: hi from v1');
  });

  it('progress notifications reach the client in order, before the result', async () => {
    const progress: number[] = [];
    const from = seen.wire.length;
    const r = await client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: (p) => void progress.push(p.progress) });
    expect(textOf(r)).toBe('done 3 steps');
    // What the bridge sent, as the client's transport received it: the three steps in order, then the result.
    const arrived = seen.wire.slice(from).flatMap((m) => {
      if ('method' in m && m.method === 'notifications/progress') return [`progress ${String((m.params as Obj).progress)}`];
      if ('result' in m && textOf(m.result) === 'done 3 steps') return ['result'];
      return [];
    });
    expect(arrived).toEqual(['progress 1', 'progress 2', 'progress 3', 'result']);
    // SDK v1 runs notification handlers a microtask late but settles a response at once, so a step that
    // arrives in the same chunk as the result (a loaded machine) never reaches onprogress; what does is in order.
    expect(progress).toEqual([1, 2, 3].slice(0, progress.length));
  });

  it(`x-mcp-header: the upstream sees Mcp-Param-Region ${headerSeen ? 'from the bridge' : 'as absent (stdio has no headers)'}`, async () => {
    if (listToolsBeforeHeader) await client.listTools();
    const r = await client.callTool({ name: 'tenant-echo', arguments: { region: 'ap-south' } });
    expect(r.structuredContent).toEqual({ region: 'ap-south', header: headerSeen ? 'ap-south' : null });
  });

  it('a tool that changes the tool list: the client receives tools/list_changed', async () => {
    const before = seen.toolsChanged;
    await client.callTool({ name: 'add-tool', arguments: { name: `added-${tag.replace(/\W/g, '')}` } });
    await waitFor(() => (seen.toolsChanged > before ? true : undefined), 8_000, 'tools/list_changed');
  });

  it('resources/subscribe: resources/updated arrives after bump', async () => {
    await client.subscribeResource({ uri: 'test://counter' });
    const before = seen.updated.length;
    await client.callTool({ name: 'bump', arguments: {} });
    expect(await waitFor(() => seen.updated[before], 8_000, 'resources/updated')).toBe('test://counter');
    await client.unsubscribeResource({ uri: 'test://counter' });
  });

  it('logging at a set level: below it nothing, at or above it notifications/message', async () => {
    await client.setLoggingLevel('warning');
    await client.callTool({ name: 'log', arguments: { level: 'info', data: `quiet-${tag}` } });
    await client.callTool({ name: 'log', arguments: { level: 'error', data: `loud-${tag}` } });
    await waitFor(() => seen.logs.find((l) => l.data === `loud-${tag}`), 8_000, 'the error-level log message');
    expect(seen.logs.find((l) => l.data === `quiet-${tag}`)).toBeUndefined();
  });

  it('cancellation mid-call reaches the upstream', async () => {
    const ac = new AbortController();
    const call = client.callTool({ name: 'slow', arguments: { ms: 10_000 } }, undefined, { signal: ac.signal });
    // Cancel only once the upstream runs the call (a loaded machine may start it late).
    await waitFor(async () => {
      const r = await client.callTool({ name: 'last-cancelled', arguments: {} });
      return ((r.structuredContent as Obj).running as number) > 0 ? true : undefined;
    }, 8_000, 'the slow call running upstream');
    ac.abort('test cancels');
    await expect(call).rejects.toThrow();
    const cancelled = await waitFor(async () => {
      const r = await client.callTool({ name: 'last-cancelled', arguments: {} });
      return (r.structuredContent as Obj).cancelled === true ? true : undefined;
    }, 8_000, 'the upstream seeing the call cancelled');
    expect(cancelled).toBe(true);
  });
}

/**
 * initialize + initialized, raw, with a 2025 `protocolVersion` against a bridge
 * in front of the modern fixture; returns the minted Mcp-Session-Id.
 */
export async function rawSession(base: string, protocolVersion: string): Promise<string> {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
  const res = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ result: { protocolVersion, serverInfo: { name: 'modern-fixture' } } });
  const sid = res.headers.get('mcp-session-id');
  expect(sid).toMatch(/^[0-9a-f]{64}$/);
  const ack = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sid! });
  expect(ack.status).toBe(202);
  return sid!;
}
