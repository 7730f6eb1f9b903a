import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBridge } from '../../src/daemon/start-bridge.js';
import { startEverything, type RunningServer } from '../helpers/processes.js';
import { modernClient, sharedCases, startDaemon, V } from './bridge-m2l-e2e-shared.js';

describe('e2e: SDK v2 client (2026-07-28) → mcp-bridge → server-everything over Streamable HTTP (2025 sessions)', () => {
  let upstream: RunningServer;
  let daemon: RunningBridge;
  let client: Client;
  beforeAll(async () => {
    upstream = await startEverything('streamableHttp');
    daemon = await startDaemon({ kind: 'url', url: `${upstream.url}/mcp`, headers: {} });
    client = await modernClient(daemon.url!);
  });
  afterAll(async () => {
    await client?.close();
    await daemon?.close();
    await upstream?.close();
  });

  it('the detected upstream is an initialize-era Streamable HTTP server', () => {
    expect(daemon.facts).toMatchObject({ epoch: 'initialize', transport: 'streamable-http' });
  });

  sharedCases(() => client);

  it('without the bridge, the same client pinned to 2026-07-28 cannot talk to server-everything', async () => {
    const direct = new Client({ name: 'direct', version: '1.0.0' }, { versionNegotiation: { mode: { pin: V } } });
    let failed: unknown;
    try {
      await direct.connect(new StreamableHTTPClientTransport(new URL(`${upstream.url}/mcp`)));
      await direct.listTools();
    } catch (err) {
      failed = err;
    } finally {
      await direct.close().catch(() => undefined);
    }
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toMatch(/did not offer pinned protocol version 2026-07-28/);
  });
});
