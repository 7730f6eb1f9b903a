import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBridge } from '../../src/daemon/start-bridge.js';
import { startEverything, type RunningServer } from '../helpers/processes.js';
import { modernClient, sharedCases, startDaemon } from './bridge-m2l-e2e-shared.js';

describe('e2e: SDK v2 client (2026-07-28) → mcp-bridge → server-everything over http+sse (2024-11-05)', () => {
  let upstream: RunningServer;
  let daemon: RunningBridge;
  let client: Client;
  beforeAll(async () => {
    upstream = await startEverything('sse');
    daemon = await startDaemon({ kind: 'url', url: `${upstream.url}/sse`, headers: {} });
    client = await modernClient(daemon.url!);
  });
  afterAll(async () => {
    await client?.close();
    await daemon?.close();
    await upstream?.close();
  });

  it('the detected upstream is an http+sse server', () => {
    expect(daemon.facts).toMatchObject({ epoch: 'http+sse', transport: 'http+sse' });
  });

  sharedCases(() => client);
});
