import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { FAULT_SERVER_COMMAND, freePort, linesWith, modernPost, readMessages, report, spawnBridge, textOf, waitUntil, type SpawnedBridge } from '../helpers/faults.js';
import { startEverything, type RunningServer } from '../helpers/processes.js';
import { childPidsOf, isAlive } from '../helpers/proc.js';

/**
 * Issue 6, Faults: the bridge's own life. An upstream that is down at start
 * (exit 1 with a clear message, or `--wait-for-upstream` until it comes up),
 * and SIGTERM: stop accepting, let calls in flight finish up to
 * `--shutdown-timeout`, end listens with their graceful result, then close the
 * children with stdin EOF, SIGTERM and SIGKILL. Through the built CLI.
 */

let bridge: SpawnedBridge | undefined;
let upstream: RunningServer | undefined;
const clients: Client[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  await bridge?.close();
  await upstream?.close();
  bridge = undefined;
  upstream = undefined;
});

async function v1Client(url: string): Promise<Client> {
  const client = new Client({ name: 'lifecycle', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  clients.push(client);
  return client;
}

describe('an upstream that is down at start', () => {
  it('exits 1 at once, naming the URL it could not reach', async () => {
    const port = await freePort();
    const started = Date.now();
    const r = await runCli(['--listen', '127.0.0.1:0', '--upstream', `http://127.0.0.1:${port}/mcp`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`mcp-bridge: cannot reach http://127.0.0.1:${port}/mcp`);
    expect(r.stderr).toMatch(/ECONNREFUSED|refused/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('--wait-for-upstream <ms> retries with backoff, then exits 1 saying how long it waited', async () => {
    const port = await freePort();
    const started = Date.now();
    const r = await runCli(['--listen', '127.0.0.1:0', '--log-level', 'warn', '--wait-for-upstream', '1500', '--upstream', `http://127.0.0.1:${port}/mcp`]);
    const elapsed = Date.now() - started;
    expect(r.code).toBe(1);
    const [, waited, attempts] = /still unreachable after waiting (\d+) ms, (\d+) attempts; see --wait-for-upstream/.exec(r.stderr) ?? [];
    expect(Number(waited)).toBeGreaterThanOrEqual(1_500);
    expect(elapsed).toBeGreaterThanOrEqual(1_500);
    // Each failed attempt but the last logs its retry: 250 ms, doubling, cut to what is left of the 1500 ms.
    // (How many fit depends on how long each probe took, so the delays are checked against the time waited.)
    const retries = linesWith(r.stderr, '"upstream.waiting"').map((l) => JSON.parse(l) as { attempt: number; retryInMs: number; waitedMs: number });
    expect(retries.length).toBeGreaterThanOrEqual(2);
    expect(Number(attempts)).toBe(retries.length + 1);
    retries.forEach((w, i) => {
      expect(w.attempt).toBe(i + 1);
      expect(w.retryInMs).toBe(Math.min(250 * 2 ** i, 1_500 - w.waitedMs));
    });
    report('upstream down, --wait-for-upstream 1500', { exitCode: r.code, elapsedMs: elapsed, attempts: Number(attempts) });
  });

  it('--wait-for-upstream: the bridge starts serving once the upstream comes up', async () => {
    const port = await freePort();
    const started = Date.now();
    let waits = 0;
    const starting = spawnBridge(['--log-level', 'warn', '--wait-for-upstream', '--upstream', `http://127.0.0.1:${port}/mcp`], {
      onStderr: (all) => (waits = linesWith(all, '"upstream.waiting"').length),
    });
    starting.catch(() => undefined); // awaited below; an early exit must not surface as unhandled meanwhile
    // Visible in the meantime: the bridge is waiting, not exiting (it has retried twice).
    await waitUntil('the bridge to retry twice', () => waits >= 2);
    upstream = await startEverything('streamableHttp', { PORT: String(port) });
    expect(upstream.port).toBe(port);
    bridge = await starting;
    const upAfterMs = Date.now() - started;
    expect(bridge.stderr()).toContain('"upstream.waiting"');
    const client = await v1Client(bridge.url);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'late upstream' } }))).toBe('Echo: late upstream');
    report('upstream down, --wait-for-upstream (no limit)', { servingAfterMs: upAfterMs });
  });
});

describe('SIGTERM', () => {
  it('stops accepting, lets the in-flight call finish, ends a listen gracefully, then EOF → SIGTERM → SIGKILL for a stubborn child', async () => {
    bridge = await spawnBridge(['--log-level', 'info', '--shutdown-timeout', '6000', '--', ...FAULT_SERVER_COMMAND], {
      env: { FAULT_IGNORE_EOF: '1', FAULT_IGNORE_SIGTERM: '1' },
    });
    const b = bridge;
    const client = await v1Client(b.url);
    const listenRes = await modernPost(b.url, 'listen-1', 'subscriptions/listen', { notifications: { toolsListChanged: true } });
    let acked = false;
    const listen = readMessages(listenRes, (m) => {
      if (m.method === 'notifications/subscriptions/acknowledged') acked = true;
    });
    await waitUntil('the listen acknowledgement', () => acked);

    const sleeping = client.callTool({ name: 'sleep', arguments: { ms: 1_500 } }, undefined, { timeout: 20_000 });
    await waitUntil('the sleep call to reach the child', () => b.stderr().includes('fault-fixture: sleep started'));
    const children = childPidsOf(b.pid);
    expect(children.length).toBeGreaterThanOrEqual(1);

    const signalledAt = Date.now();
    const stderrAtSignal = b.stderr().length;
    b.child.kill('SIGTERM');
    await waitUntil('the shutdown to begin', () => b.stderr().includes('shutting down'));
    const late = await fetch(`${b.url}/healthz`).then(
      (r) => r.status,
      () => 'refused' as const,
    );
    expect(['refused', 503]).toContain(late);

    expect(textOf(await sleeping)).toBe('slept 1500');
    const finishedMs = Date.now() - signalledAt;
    const messages = await listen;
    expect(messages.at(-1)).toMatchObject({ id: 'listen-1', result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' } } });

    const code = await b.exited;
    const exitedMs = Date.now() - signalledAt;
    expect(code).toBe(0);
    for (const pid of children) expect(isAlive(pid)).toBe(false);
    const err = b.stderr().slice(stderrAtSignal);
    const eof = err.indexOf('fault-fixture: stdin closed');
    const term = err.indexOf('fault-fixture: got SIGTERM');
    const kill = err.indexOf('"stdio.sigkill"');
    expect(eof).toBeGreaterThanOrEqual(0);
    expect(term).toBeGreaterThan(eof);
    expect(kill).toBeGreaterThan(term);
    // Calls finished (1.5 s), then two 2 s grace steps for the child that ignores EOF and SIGTERM.
    expect(exitedMs).toBeLessThan(6_000 + 4_000 + 3_000);
    report('SIGTERM graceful', { inFlightFinishedAfterMs: finishedMs, exitedAfterMs: exitedMs, exitCode: code, childrenKilled: children.length });
  });

  it('--shutdown-timeout cuts a call that outlives it; the bridge still exits 0 and leaves no child', async () => {
    bridge = await spawnBridge(['--log-level', 'info', '--shutdown-timeout', '1000', '--', ...FAULT_SERVER_COMMAND]);
    const b = bridge;
    // A raw modern call: its reply ends when the bridge closes (an SDK v1 client would wait for its own timeout).
    // The reply's headers wait for the answer (JSON unless something streams first), so nothing is awaited here.
    const hanging = modernPost(b.url, 'hang-1', 'tools/call', { name: 'hang', arguments: {} }).then((res) => readMessages(res)).then(
      (messages) => (messages.some((m) => m.id === 'hang-1') ? 'answered' : 'ended without an answer'),
      () => 'connection closed',
    );
    await waitUntil('the hang call to reach the child', () => b.stderr().includes('fault-fixture: hang started'));
    const children = childPidsOf(b.pid);
    const signalledAt = Date.now();
    b.child.kill('SIGTERM');
    const code = await b.exited;
    const exitedMs = Date.now() - signalledAt;
    expect(code).toBe(0);
    expect(await hanging).not.toBe('answered');
    expect(exitedMs).toBeGreaterThanOrEqual(950);
    expect(exitedMs).toBeLessThan(1_000 + 4_000 + 3_000);
    expect(b.stderr()).toMatch(/"shutdown\.drained".*"idle":false,"inflight":1/);
    // The child heard the cancel before its stdin closed.
    expect(b.stderr()).toContain('fault-fixture: cancelled hang');
    for (const pid of children) expect(isAlive(pid)).toBe(false);
    report('SIGTERM past --shutdown-timeout 1000', { exitedAfterMs: exitedMs });
  });
});
