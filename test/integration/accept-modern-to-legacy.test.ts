import { Client, SSEClientTransport, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_COMMAND, startCli, type RunningCli } from '../helpers/cli.js';
import { EVERYTHING_STDIO_COMMAND, startEverything, type RunningServer } from '../helpers/processes.js';
import { envelope, httpRecorder, rawEverythingLines, StdioLines, stdinTee, textOf, until, V, type Obj, type Recorder } from './accept-helpers.js';

/**
 * Acceptance of issue 3 through the built CLI: the SDK v2 client pinned to
 * 2026-07-28 (automatic input fulfilment on) → `mcp-bridge -- <server-everything
 * stdio>` or `mcp-bridge --upstream <url>` → server-everything in its stdio,
 * streamableHttp and sse modes. What the upstream receives is recorded (a tee
 * on the child's stdin, or a pass-through HTTP recorder in front of the
 * server), so "the cancel reaches the upstream" is checked where it lands.
 */

const DOC = 'demo://resource/static/document/architecture.md';
const CAPS = { elicitation: {}, sampling: {}, roots: {} };
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

type Mode = 'stdio' | 'streamableHttp' | 'sse';

/** A modern-only client that answers elicitation, sampling and roots. */
function modernClient(name: string, capabilities: Obj = CAPS): Client {
  const client = new Client({ name, version: '1.0.0' }, { capabilities, versionNegotiation: { mode: { pin: V } } });
  if (capabilities.elicitation) client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Grace Hopper', check: true } }));
  if (capabilities.sampling) client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', content: { type: 'text', text: 'pong-accept' }, model: 'accept-model', stopReason: 'endTurn' }));
  if (capabilities.roots) client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///accept/root', name: 'accept' }] }));
  return client;
}

/** The upstream id of the tools/call named `tool` with `args`, and whether a notifications/cancelled named it. */
function cancelledUpstream(received: Obj[], tool: string, args: Obj): { callId: unknown; cancelled: boolean } {
  const call = received.find((m) => m.method === 'tools/call' && (m.params as Obj).name === tool && JSON.stringify((m.params as Obj).arguments) === JSON.stringify(args));
  const callId = call?.id;
  const cancelled = callId !== undefined && received.some((m) => m.method === 'notifications/cancelled' && (m.params as Obj).requestId === callId);
  return { callId, cancelled };
}

interface Launched {
  args: string[];
  recorder: Recorder;
  server?: RunningServer;
}

/** Starts the upstream of one mode and the recorder in front of it; the CLI arguments naming it. */
async function launchUpstream(mode: Mode): Promise<Launched> {
  if (mode === 'stdio') {
    const tee = stdinTee();
    return { args: ['--', ...tee.command], recorder: tee.recorder };
  }
  const server = await startEverything(mode);
  const recorder = await httpRecorder(server.url);
  return { args: ['--upstream', `${recorder.url}${mode === 'sse' ? '/sse' : '/mcp'}`], recorder, server };
}

/** The same pinned client, straight to server-everything: the transport it would need there. */
function directTransport(mode: Mode, server: RunningServer | undefined): Transport {
  const [command, ...args] = EVERYTHING_STDIO_COMMAND;
  const byMode: Record<Mode, () => Transport> = {
    stdio: () => new StdioClientTransport({ command: command!, args, stderr: 'ignore' }),
    streamableHttp: () => new StreamableHTTPClientTransport(new URL(`${server!.url}/mcp`)),
    sse: () => new SSEClientTransport(new URL(`${server!.url}/sse`)),
  };
  return byMode[mode]();
}

interface CaseOptions {
  label: string;
  /** Whether `trigger` exists (another client on the same bridge). */
  listChanged: boolean;
  /**
   * Over stdio the SDK v2 client runs notification handlers a microtask later
   * but settles a response at once, so progress read in the same chunk as the
   * response is dropped client-side (proven on the wire by the raw stdio case).
   */
  progressExact: boolean;
}

/**
 * Every item of issue 3's first Tests bullet, through one connected client.
 * `trigger()` opens a fresh upstream session (another capability set), which
 * makes server-everything register its conditional tools: tools/list_changed.
 */
function featureCases(ctx: () => { client: Client; recorder: Recorder; trigger?: () => Promise<void> }, opts: CaseOptions): void {
  const label = opts.label;
  it('discover: the legacy server is seen as a 2026-07-28 server with its own serverInfo and capabilities', () => {
    const { client } = ctx();
    expect(client.getNegotiatedProtocolVersion()).toBe(V);
    expect(client.getServerVersion()).toMatchObject({ name: 'mcp-servers/everything' });
    const caps = client.getServerCapabilities() as Obj;
    expect(caps).toMatchObject({ tools: { listChanged: true }, resources: { subscribe: true }, logging: {} });
    expect(caps).not.toHaveProperty('tasks');
  });

  it('tools/list lists the capability-gated tools, and echo answers', async () => {
    const { client } = ctx();
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'trigger-elicitation-request', 'trigger-sampling-request', 'get-roots-list', 'trigger-long-running-operation']));
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: `accept ${label}` } }))).toContain(`accept ${label}`);
  });

  it('trigger-elicitation-request: the server’s elicitation/create is fulfilled by the modern client', async () => {
    expect(textOf(await ctx().client.callTool({ name: 'trigger-elicitation-request', arguments: {} }))).toContain('Name: Grace Hopper');
  });

  it('trigger-sampling-request: the server’s sampling/createMessage is fulfilled by the modern client', async () => {
    expect(textOf(await ctx().client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'ping', maxTokens: 5 } }))).toContain('pong-accept');
  });

  it('get-roots-list: the server lists the modern client’s roots', async () => {
    expect(textOf(await ctx().client.callTool({ name: 'get-roots-list', arguments: {} }))).toContain('file:///accept/root');
  });

  const progressName = opts.progressExact
    ? 'trigger-long-running-operation: every progress arrives on the request’s stream, in order, before the result'
    : 'trigger-long-running-operation: progress arrives in order before the result (the client may drop what it reads with the response)';
  it(progressName, async () => {
    const progress: number[] = [];
    const r = await ctx().client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } }, { onprogress: (p) => void progress.push(p.progress) });
    expect(textOf(r)).toContain('Long running operation completed');
    if (opts.progressExact) expect(progress).toEqual([1, 2, 3]);
    else expect([[1], [1, 2], [1, 2, 3]]).toContainEqual(progress);
  });

  it('subscriptions/listen receives resources/updated for a subscribed URI', async () => {
    const { client } = ctx();
    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
    const sub = await client.listen({ resourceSubscriptions: [DOC] });
    try {
      expect(sub.honoredFilter).toEqual({ resourceSubscriptions: [DOC] });
      expect(textOf(await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} }))).toContain('Started');
      await until(() => updates.length > 0);
      expect(updates[0]).toBe(DOC);
    } finally {
      await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
      await sub.close();
    }
  });

  if (opts.listChanged) it('subscriptions/listen receives tools/list_changed when the server’s tool list changes', async () => {
    const { client, trigger } = ctx();
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => void changed++);
    const sub = await client.listen({ toolsListChanged: true });
    try {
      expect(sub.honoredFilter).toEqual({ toolsListChanged: true });
      await trigger!();
      await until(() => changed > 0);
    } finally {
      await sub.close();
    }
  });

  it('a call cancelled mid-flight reaches the upstream as notifications/cancelled naming that call', async () => {
    const { client, recorder } = ctx();
    const args = { duration: 10, steps: 10 };
    const ac = new AbortController();
    // Abort once the upstream is running the call (its first progress arrived), not on a timer.
    const call = client.callTool({ name: 'trigger-long-running-operation', arguments: args }, { signal: ac.signal, onprogress: () => ac.abort() });
    await expect(call).rejects.toThrow();
    await until(() => cancelledUpstream(recorder.received(), 'trigger-long-running-operation', args).cancelled, 5_000);
    expect(cancelledUpstream(recorder.received(), 'trigger-long-running-operation', args).callId).toBeDefined();
    // The session the call held is free again: the next call is answered at once.
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'after cancel' } }))).toContain('after cancel');
  });
}

describe.each<Mode>(['stdio', 'streamableHttp', 'sse'])('issue 3 through the built CLI: SDK v2 client (pinned) over HTTP → server-everything in %s mode', (mode) => {
  let up: Launched;
  let cli: RunningCli;
  let client: Client;
  const others: Client[] = [];
  let triggers = 0;

  beforeAll(async () => {
    up = await launchUpstream(mode);
    cli = await startCli(['--log-level', 'warn', ...up.args]);
    client = modernClient(`accept-${mode}`);
    await client.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`)));
  });

  afterAll(async () => {
    for (const c of [client, ...others]) await c?.close().catch(() => undefined);
    await cli?.close();
    await up?.server?.close();
    await up?.recorder.close();
  });

  featureCases(
    () => ({
      client,
      recorder: up.recorder,
      trigger: async () => {
        // Another capability set is another pooled upstream session: a fresh initialize there.
        const other = modernClient(`accept-${mode}-trigger`, { experimental: { [`accept.test/trigger-${++triggers}`]: {} } });
        others.push(other);
        await other.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`)));
        await other.listTools();
      },
    }),
    { label: mode, listChanged: true, progressExact: true },
  );

  it('without the bridge, the same client pinned to 2026-07-28 cannot talk to server-everything', async () => {
    const direct = new Client({ name: 'direct', version: '1.0.0' }, { capabilities: CAPS, versionNegotiation: { mode: { pin: V } } });
    let failed: unknown;
    try {
      await direct.connect(directTransport(mode, up.server));
      await direct.listTools();
    } catch (err) {
      failed = err;
    } finally {
      await direct.close().catch(() => undefined);
    }
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toMatch(/2026-07-28/);
  });
});

describe('issue 3 through the built CLI: SDK v2 client (pinned) over stdio → mcp-bridge --stdio → server-everything over stdio', () => {
  let recorder: Recorder;
  let client: Client;

  beforeAll(async () => {
    const tee = stdinTee();
    recorder = tee.recorder;
    client = modernClient('accept-stdio-face');
    const [command, ...args] = CLI_COMMAND;
    await client.connect(new StdioClientTransport({ command: command!, args: [...args, '--stdio', '--log-level', 'warn', '--', ...tee.command], stderr: 'ignore' }));
  });

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await recorder?.close();
  });

  featureCases(() => ({ client, recorder }), { label: 'stdio face', listChanged: false, progressExact: false });
});

describe('issue 3 through the built CLI: raw 2026-07-28 lines on mcp-bridge --stdio → server-everything over stdio', () => {
  let io: StdioLines;
  rawEverythingLines((lines) => (io = lines));

  it('on stdout every progress line of a call comes before its response, under the client’s token', async () => {
    const res = await io.request('long', 'tools/call', { name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } }, {}, { progressToken: 'tok-raw' });
    const at = io.lines.indexOf(res);
    const progress = io.lines.filter((l) => l.method === 'notifications/progress' && (l.params as Obj).progressToken === 'tok-raw');
    expect(progress.map((l) => (l.params as Obj).progress)).toEqual([1, 2, 3]);
    for (const p of progress) expect(io.lines.indexOf(p)).toBeLessThan(at);
  });

  it('a listen gets its acknowledgement, then tools/list_changed stamped with its id when a new upstream session registers tools', async () => {
    io.send({ jsonrpc: '2.0', id: 'listen-raw', method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: envelope({}) } });
    const stamped = (method: string) => io.lines.find((l) => l.method === method && ((l.params as Obj)._meta as Obj | undefined)?.[SUBSCRIPTION_ID] === 'listen-raw');
    await until(() => stamped('notifications/subscriptions/acknowledged') !== undefined);
    expect(stamped('notifications/subscriptions/acknowledged')!.params).toMatchObject({ notifications: { toolsListChanged: true } });
    // Another capability set: another pooled child, whose capability-gated tools are registered after initialize.
    expect(await io.request('list-roots', 'tools/list', {}, { roots: {} })).toHaveProperty('result');
    await until(() => stamped('notifications/tools/list_changed') !== undefined);
    io.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'listen-raw' } });
  });
});
