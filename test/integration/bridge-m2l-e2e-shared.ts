import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { expect, it } from 'vitest';
import { DEFAULT_OPTIONS, type UpstreamTarget } from '../../src/daemon/options.js';
import { startBridge, type RunningBridge } from '../../src/daemon/start-bridge.js';
import { silentLogger } from '../../src/log.js';

/**
 * End-to-end cases shared by the bridge-m2l-e2e-* files: the real SDK v2
 * client pinned to 2026-07-28 (automatic input fulfilment on) → the daemon's
 * HTTP face → the modern-to-legacy bridge → server-everything.
 */

export const V = '2026-07-28';
export const DOC = 'demo://resource/static/document/architecture.md';

export async function startDaemon(upstream: UpstreamTarget): Promise<RunningBridge> {
  return startBridge({
    ...DEFAULT_OPTIONS,
    upstream,
    logger: silentLogger,
    listen: { host: '127.0.0.1', port: 0 },
    poolMax: 2,
    callTimeoutMs: 20_000,
  });
}

/** A modern-only client that can answer elicitation, sampling and roots. */
export async function modernClient(url: string): Promise<Client> {
  const client = new Client(
    { name: 'm2l-e2e', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {}, roots: {} }, versionNegotiation: { mode: { pin: V } } },
  );
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Grace Hopper', check: true } }));
  client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', content: { type: 'text', text: 'pong-e2e' }, model: 'e2e-model', stopReason: 'endTurn' }));
  client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///e2e/root', name: 'e2e' }] }));
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}

export function textOf(result: { content?: unknown }): string {
  return ((result.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until(cond: () => boolean, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(25);
  }
}

/** Registers the shared cases; `client()` is the connected modern client of the running file. */
export function sharedCases(client: () => Client): void {
  it('discover: the client sees the legacy server as a 2026-07-28 server', () => {
    expect(client().getNegotiatedProtocolVersion()).toBe(V);
    expect(client().getServerVersion()).toMatchObject({ name: 'mcp-servers/everything' });
    expect(client().getServerCapabilities()).toMatchObject({ tools: {}, resources: { subscribe: true } });
  });

  it('tools/list and echo', async () => {
    const tools = await client().listTools();
    const names = tools.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'trigger-elicitation-request', 'trigger-sampling-request', 'get-roots-list']));
    expect(textOf(await client().callTool({ name: 'echo', arguments: { message: 'over the bridge' } }))).toContain('over the bridge');
  });

  it('elicitation: the legacy server’s elicitation/create is fulfilled by the modern client', async () => {
    const r = await client().callTool({ name: 'trigger-elicitation-request', arguments: {} });
    expect(textOf(r)).toContain('Name: Grace Hopper');
  });

  it('sampling: the legacy server’s sampling/createMessage is fulfilled by the modern client', async () => {
    const r = await client().callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'ping', maxTokens: 5 } });
    expect(textOf(r)).toContain('pong-e2e');
  });

  it('roots: get-roots-list shows the modern client’s roots', async () => {
    const r = await client().callTool({ name: 'get-roots-list', arguments: {} });
    expect(textOf(r)).toContain('file:///e2e/root');
  });

  it('progress streams on the request’s SSE response', async () => {
    const progress: number[] = [];
    const r = await client().callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.4, steps: 2 } }, { onprogress: (p) => progress.push(p.progress) });
    expect(textOf(r)).toContain('Long running operation completed');
    expect(progress).toEqual([1, 2]);
  });

  it('subscriptions/listen receives resources/updated after toggle-subscriber-updates', async () => {
    const updates: string[] = [];
    client().setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
    const sub = await client().listen({ resourceSubscriptions: [DOC] });
    expect(sub.honoredFilter).toEqual({ resourceSubscriptions: [DOC] });
    try {
      await client().callTool({ name: 'toggle-subscriber-updates', arguments: {} });
      await until(() => updates.length > 0);
      expect(updates[0]).toBe(DOC);
    } finally {
      await client().callTool({ name: 'toggle-subscriber-updates', arguments: {} });
      await sub.close();
    }
  });
}
