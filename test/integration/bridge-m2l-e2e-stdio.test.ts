import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe } from 'vitest';
import type { RunningBridge } from '../../src/daemon/start-bridge.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';
import { modernClient, sharedCases, startDaemon } from './bridge-m2l-e2e-shared.js';

const [command, ...args] = EVERYTHING_STDIO_COMMAND;

describe('e2e: SDK v2 client (2026-07-28) → mcp-bridge → server-everything over stdio', () => {
  let daemon: RunningBridge;
  let client: Client;
  beforeAll(async () => {
    daemon = await startDaemon({ kind: 'command', command, args });
    client = await modernClient(daemon.url!);
  });
  afterAll(async () => {
    await client?.close();
    await daemon?.close();
  });
  sharedCases(() => client);
});
