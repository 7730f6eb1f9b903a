import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_COMMAND, startCli, type RunningCli } from '../helpers/cli.js';
import { isAlive } from '../helpers/proc.js';

/**
 * Issue 2, upstream child lifecycle: a stdio child that exits mid-call. The
 * in-flight call gets a JSON-RPC error at once, and the next request is served
 * by a respawned child. Runs through the built CLI, with an SDK v1 client over
 * Streamable HTTP and over stdio (`mcp-bridge --stdio`).
 */

const CRASH_SERVER = [process.execPath, path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'crash-server.mjs')];

/** Far above "at once": a hang would end as the SDK's own timeout, not as the bridge's error. */
const HANG_TIMEOUT_MS = 20_000;

function textOf(result: unknown): string {
  return (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe.each(['Streamable HTTP', 'stdio'] as const)('a stdio child that crashes mid-call, SDK v1 client over %s', (kind) => {
  let cli: RunningCli | undefined;
  let client: Client;

  beforeAll(async () => {
    let transport: Transport;
    if (kind === 'stdio') {
      transport = new StdioClientTransport({ command: CLI_COMMAND[0], args: [...CLI_COMMAND.slice(1), '--stdio', '--log-level', 'warn', '--', ...CRASH_SERVER], stderr: 'pipe' });
    } else {
      cli = await startCli(['--log-level', 'warn', '--', ...CRASH_SERVER]);
      transport = new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`));
    }
    client = new Client({ name: 'crash-test', version: '1.0.0' });
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close();
    await cli?.close();
  });

  const pidNow = async () => Number(textOf(await client.callTool({ name: 'pid', arguments: {} }, undefined, { timeout: HANG_TIMEOUT_MS })));

  it('the in-flight call gets a JSON-RPC error at once (no hang), and the next request works on a respawned child', async () => {
    const before = await pidNow();
    expect(isAlive(before)).toBe(true);

    const started = Date.now();
    const failure = await client.callTool({ name: 'crash', arguments: {} }, undefined, { timeout: HANG_TIMEOUT_MS }).then(
      () => undefined,
      (err: unknown) => err,
    );
    const elapsed = Date.now() - started;
    expect(failure).toBeInstanceOf(McpError);
    expect((failure as McpError).code).toBe(-32603);
    expect((failure as McpError).message).toMatch(/exit|closed/i);
    expect(elapsed).toBeLessThan(3_000);
    expect(isAlive(before)).toBe(false);

    const after = await pidNow();
    expect(after).not.toBe(before);
    expect(isAlive(after)).toBe(true);
    const echo = await client.callTool({ name: 'echo', arguments: { message: 'after the crash' } }, undefined, { timeout: HANG_TIMEOUT_MS });
    expect(textOf(echo)).toBe('Echo: after the crash');
  });
});
