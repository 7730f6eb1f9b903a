import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBridge } from '../../src/daemon/start-bridge.js';
import { startV1WsServer } from '../fixtures/v1-ws-server.js';
import { modernClient, startDaemon, textOf, until, V } from './bridge-m2l-e2e-shared.js';

describe('e2e: SDK v2 client (2026-07-28) → mcp-bridge → an SDK v1 server over WebSocket', () => {
  let upstream: { url: string; close(): Promise<void> };
  let daemon: RunningBridge;
  let client: Client;
  beforeAll(async () => {
    upstream = await startV1WsServer();
    daemon = await startDaemon({ kind: 'url', url: upstream.url, headers: {} });
    client = await modernClient(daemon.url!);
  });
  afterAll(async () => {
    await client?.close();
    await daemon?.close();
    await upstream?.close();
  });

  it('discover, tools/list and echo', async () => {
    expect(daemon.facts).toMatchObject({ transport: 'ws' });
    expect(client.getNegotiatedProtocolVersion()).toBe(V);
    expect(client.getServerVersion()).toMatchObject({ name: 'v1-ws-fixture' });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'ask', 'progress', 'toggle-tool']));
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'via ws' } }))).toBe('Echo: via ws');
  });

  it('elicitation from the WebSocket server is fulfilled by the modern client', async () => {
    client.setRequestHandler('elicitation/create', async (req) => ({ action: 'accept', content: { answer: `answered ${req.params.message}` } }));
    expect(textOf(await client.callTool({ name: 'ask', arguments: { question: 'name?' } }))).toBe('answered name?');
  });

  it('progress reaches the modern client', async () => {
    const progress: number[] = [];
    await client.callTool({ name: 'progress', arguments: {} }, { onprogress: (p) => progress.push(p.progress) });
    expect(progress).toEqual([1, 2]);
  });

  it('a listen receives tools/list_changed when the server adds a tool', async () => {
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => void changed++);
    const sub = await client.listen({ toolsListChanged: true });
    try {
      expect(sub.honoredFilter).toEqual({ toolsListChanged: true });
      await client.callTool({ name: 'toggle-tool', arguments: {} });
      await until(() => changed > 0);
      expect(changed).toBeGreaterThanOrEqual(1);
    } finally {
      await client.callTool({ name: 'toggle-tool', arguments: {} });
      await sub.close();
    }
  });
});
