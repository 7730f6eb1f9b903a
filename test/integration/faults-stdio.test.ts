import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { FAULT_SERVER_COMMAND, linesWith, report, textOf, waitUntil } from '../helpers/faults.js';
import { childPidsOf, isAlive } from '../helpers/proc.js';

/**
 * Issue 6, Faults: a legacy stdio child killed with SIGKILL in the middle of a
 * call, and a child that never answers (`--call-timeout`). Through the built
 * CLI, with an SDK v1 client (Streamable HTTP, legacy-to-legacy) and an SDK v2
 * client pinned to 2026-07-28 (modern-to-legacy) in front of the fault fixture.
 */

const CALL_TIMEOUT_MS = 2_000;
/** Far above "at once": a hang would end as the client's own timeout, not as the bridge's error. */
const CLIENT_TIMEOUT_MS = 20_000;

interface Caller {
  call(name: string, args?: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

async function v1Caller(url: string): Promise<Caller> {
  const client = new Client({ name: 'faults-v1', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return {
    call: (name, args = {}) => client.callTool({ name, arguments: args }, undefined, { timeout: CLIENT_TIMEOUT_MS }),
    close: () => client.close(),
  };
}

async function v2Caller(url: string): Promise<Caller> {
  const client = new V2Client({ name: 'faults-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new V2Transport(new URL(`${url}/mcp`)));
  return {
    call: (name, args = {}) => client.callTool({ name, arguments: args }, { timeout: CLIENT_TIMEOUT_MS }),
    close: () => client.close(),
  };
}

const CLIENTS = [
  { kind: 'SDK v1 over Streamable HTTP (legacy-to-legacy)', connect: v1Caller },
  { kind: 'SDK v2 pinned to 2026-07-28 (modern-to-legacy)', connect: v2Caller },
] as const;

function errorOf(p: Promise<unknown>): Promise<{ code?: number; message: string } | undefined> {
  return p.then(
    () => undefined,
    (err: { code?: number; message: string }) => err,
  );
}

describe.each(CLIENTS)('a stdio child that fails mid-call, $kind', ({ kind, connect }) => {
  let cli: RunningCli;
  let caller: Caller;

  beforeAll(async () => {
    // One child at a time, so the child under test is the bridge's only one.
    cli = await startCli(['--log-level', 'info', '--pool-max', '1', '--call-timeout', String(CALL_TIMEOUT_MS), '--', ...FAULT_SERVER_COMMAND]);
    caller = await connect(cli.url);
  });

  afterAll(async () => {
    await caller?.close();
    await cli?.close();
  });

  it('SIGKILL mid-call: the caller gets a JSON-RPC error at once, and the next call works on a new child', async () => {
    const before = Number(textOf(await caller.call('pid')));
    const hangsBefore = linesWith(cli.stderr(), 'fault-fixture: hang started').length;
    const failure = errorOf(caller.call('hang'));
    await waitUntil('the hang call to reach the child', () => linesWith(cli.stderr(), 'fault-fixture: hang started').length > hangsBefore);
    expect(childPidsOf(cli.child.pid!)).toEqual([before]);

    const killedAt = Date.now();
    process.kill(before, 'SIGKILL');
    const err = await failure;
    const latencyMs = Date.now() - killedAt;
    expect(err).toBeDefined();
    expect(err!.code).toBe(-32603);
    expect(err!.message).toMatch(/exit|closed|signal/i);
    // Well inside the call timeout: the error came from the exit, not from the deadline.
    expect(latencyMs).toBeLessThan(CALL_TIMEOUT_MS);
    expect(isAlive(before)).toBe(false);

    const echo = await caller.call('echo', { message: `after SIGKILL (${kind})` });
    expect(textOf(echo)).toBe(`Echo: after SIGKILL (${kind})`);
    const after = Number(textOf(await caller.call('pid')));
    expect(after).not.toBe(before);
    report(`SIGKILL mid-call, ${kind}`, { errorAfterKillMs: latencyMs });
  });

  it('a child that closes its stdin and runs on is ended at the first write that fails: its calls get an error at once, the next call a new child', async () => {
    const before = Number(textOf(await caller.call('pid')));
    const closesBefore = linesWith(cli.stderr(), 'fault-fixture: stdin closed by close-stdin').length;
    const pending = errorOf(caller.call('close-stdin'));
    await waitUntil('the child to close its stdin', () => linesWith(cli.stderr(), 'fault-fixture: stdin closed by close-stdin').length > closesBefore);
    const started = Date.now();
    const refused = await errorOf(caller.call('echo', { message: 'into a closed stdin' }));
    expect(refused?.code).toBe(-32603);
    expect(refused?.message).toMatch(/could not be written to \(write EPIPE\) and was ended/);
    // The write's failure ended the child: no call waited for the call timeout.
    expect(Date.now() - started).toBeLessThan(CALL_TIMEOUT_MS);
    expect((await pending)?.code).toBe(-32603);
    expect(isAlive(before)).toBe(false);
    expect(linesWith(cli.stderr(), 'stdio.stdin_write_failed').length).toBeGreaterThan(0);

    expect(textOf(await caller.call('echo', { message: 'after a closed stdin' }))).toBe('Echo: after a closed stdin');
    expect(Number(textOf(await caller.call('pid')))).not.toBe(before);
  });

  it('a child that never answers: --call-timeout gives the caller an error and the child gets notifications/cancelled', async () => {
    const cancelsBefore = linesWith(cli.stderr(), 'fault-fixture: cancelled hang').length;
    const started = Date.now();
    const err = await errorOf(caller.call('hang'));
    const elapsedMs = Date.now() - started;
    expect(err).toBeDefined();
    expect(err!.code).toBe(-32603);
    expect(err!.message).toMatch(/timed out after 2000 ms/);
    expect(elapsedMs).toBeGreaterThanOrEqual(CALL_TIMEOUT_MS - 50);
    expect(elapsedMs).toBeLessThan(CALL_TIMEOUT_MS + 3_000);
    const cancelled = await waitUntil('notifications/cancelled at the child', () => {
      const lines = linesWith(cli.stderr(), 'fault-fixture: cancelled hang');
      return lines.length > cancelsBefore ? lines.at(-1) : undefined;
    });
    expect(cancelled).toMatch(/reason=.*timed out/);

    // The same child goes on serving.
    expect(textOf(await caller.call('echo', { message: 'after the timeout' }))).toBe('Echo: after the timeout');
    report(`hung child, ${kind}`, { callTimeoutMs: CALL_TIMEOUT_MS, errorAfterMs: elapsedMs });
  });
});
