import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterKeys } from '../../src/cluster/cluster-keys.js';
import { replicaPorts, startHaproxy, startReplica, TEST_CLUSTER_SECRET, type Replica, type RunningHaproxy } from '../helpers/cluster.js';
import { openRawLegacySession, readMessages } from '../helpers/faults.js';
import { childPidsOf, killQuietly } from '../helpers/proc.js';
import { EVERYTHING_STDIO_COMMAND, startEverything, type RunningServer } from '../helpers/processes.js';

/**
 * Issue 16, Proof: HAProxy in round robin, knowing nothing of MCP, in front of
 * three replicas of the built CLI wrapping server-everything over stdio, then
 * three in front of one server-everything over Streamable HTTP. Every
 * request may land on any replica; state held elsewhere is forwarded to its
 * owner. Payloads carry each client's own name, so a misrouted answer shows.
 */

const V = '2026-07-28';
const DOC = 'demo://resource/static/document/architecture.md';
const REPLICA_ARGS = ['--log-level', 'debug', '--debug-stats', '--pool-max', '6', '--call-timeout', '20000', '--cluster-handoff', '1500', '--shutdown-timeout', '8000'];
const keys = new ClusterKeys(TEST_CLUSTER_SECRET);

// The cluster of the running describe block (they run one after the other).
let upstream: string[];
let ports: number[];
let replicas: Replica[];
let lb: RunningHaproxy | undefined;

async function setUp(args: string[]): Promise<void> {
  upstream = args;
  ports = await replicaPorts(3);
  replicas = await Promise.all(ports.map((p) => startReplica(p, ports, upstream, REPLICA_ARGS)));
  lb = await startHaproxy(ports);
}

async function tearDown(): Promise<void> {
  await lb?.close();
  await Promise.all((replicas ?? []).map((r) => r.cli.close()));
  lb = undefined;
  replicas = [];
}

/** Forwards relayed to an owner so far, over every replica (their debug lines). */
function forwards(): number {
  return replicas.reduce((n, r) => n + (r.cli.stderr().match(/"event":"cluster\.forwarded"[^\n]*"mode":"owner"/g) ?? []).length, 0);
}

function textOf(result: { content?: unknown }): string {
  return ((result.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n');
}

/** An SDK v2 client pinned to 2026-07-28 that answers elicitation and sampling with its own name. */
async function v2Client(who: string, gate?: { asked: () => void; open: Promise<void> }): Promise<V2Client> {
  const client = new V2Client({ name: who, version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {} }, versionNegotiation: { mode: { pin: V } } });
  client.setRequestHandler('elicitation/create', async () => {
    gate?.asked();
    await gate?.open;
    return { action: 'accept', content: { name: who, check: true } };
  });
  client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', content: { type: 'text', text: `pong-${who}` }, model: 'cluster-model', stopReason: 'endTurn' }));
  await client.connect(new V2Transport(new URL(`${lb!.url}/mcp`)));
  return client;
}

/** An SDK v1 client over Streamable HTTP or http+sse that answers elicitation with its own name. */
async function v1Client(who: string, kind: 'streamable' | 'sse'): Promise<V1Client> {
  const client = new V1Client({ name: who, version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: who, check: true } }));
  await client.connect(kind === 'sse' ? new SSEClientTransport(new URL(`${lb!.url}/sse`)) : new V1Transport(new URL(`${lb!.url}/mcp`)));
  return client;
}

async function mrtrRound(client: V2Client, who: string): Promise<void> {
  expect(textOf(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }))).toContain(`Name: ${who}\n`);
  expect(textOf(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: who, maxTokens: 5 } }))).toContain(`pong-${who}`);
}

async function legacyRound(client: V1Client, who: string): Promise<void> {
  for (let i = 0; i < 3; i++) expect(textOf((await client.callTool({ name: 'echo', arguments: { message: `${who}#${i}` } })) as { content?: unknown })).toBe(`Echo: ${who}#${i}`);
  expect(textOf((await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })) as { content?: unknown })).toContain(`Name: ${who}\n`);
}

/** Waits until `n` calls have been counted by `hit`, bounded. */
function counter(n: number, timeoutMs = 30_000): { hit: () => void; reached: Promise<void> } {
  let count = 0;
  let reach!: () => void;
  const reached = new Promise<void>((resolve, reject) => {
    reach = resolve;
    setTimeout(() => reject(new Error(`only ${count} of ${n} in ${timeoutMs} ms`)), timeoutMs).unref();
  });
  return { hit: () => void (++count === n && reach()), reached };
}

async function until(cond: () => boolean, timeoutMs = 5_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !cond() && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 25));
}

async function stats(r: Replica): Promise<{ parked?: number }> {
  return (await fetch(`${r.url}/debug/stats`)).json() as Promise<{ parked?: number }>;
}

function retriesCross(): void {
  it('SDK v2 MRTR: each retry lands on another replica and is forwarded to the call’s owner', async () => {
    const client = await v2Client('solo');
    try {
      const before = forwards();
      // One client alone: round robin sends each retry to the replica after the one that parked the call.
      for (let i = 0; i < 3; i++) await mrtrRound(client, 'solo');
      // The replicas' debug lines reach this process through pipes: wait for them (bounded), then count exactly.
      await until(() => forwards() - before >= 6);
      expect(forwards() - before).toBe(6);
    } finally {
      await client.close();
    }
  }, 60_000);
}

function mixedLoad(): void {
  it('SDK v2 MRTR, SDK v1 Streamable HTTP and http+sse sessions, listens, all at once: none lost, none misrouted', async () => {
    const before = forwards();
    const modern = Array.from({ length: 6 }, (_, i) => `modern-${i}`);
    const streamable = Array.from({ length: 3 }, (_, i) => `streamable-${i}`);
    const sse = Array.from({ length: 3 }, (_, i) => `sse-${i}`);
    const runs = [
      ...modern.map(async (who) => {
        const c = await v2Client(who);
        try {
          for (let i = 0; i < 2; i++) await mrtrRound(c, who);
        } finally {
          await c.close();
        }
      }),
      ...[...streamable.map((w) => [w, 'streamable'] as const), ...sse.map((w) => [w, 'sse'] as const)].map(async ([who, kind]) => {
        const c = await v1Client(who, kind);
        try {
          await legacyRound(c, who);
        } finally {
          await c.close();
        }
      }),
      ...[0, 1].map(async (i) => {
        // A listen is served wherever it lands: acknowledged with its filter, then closed by the client.
        const c = await v2Client(`listener-${i}`);
        try {
          const sub = await c.listen({ resourceSubscriptions: [DOC] });
          expect(sub.honoredFilter).toEqual({ resourceSubscriptions: [DOC] });
          await sub.close();
        } finally {
          await c.close();
        }
      }),
    ];
    const settled = await Promise.allSettled(runs);
    expect(settled.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason))).toEqual([]);
    // Most retries and session messages cross replicas: with 3 of them, round robin cannot keep them home.
    expect(forwards() - before).toBeGreaterThan(modern.length);
  }, 120_000);
}

function faults(): void {
  it('a replica killed with parked calls and sessions: only what it owned fails, with "gone" (-32602 within the deadline, 404), the rest complete', async () => {
    // Each parked call holds an upstream child until its retry: at most --pool-max (6) on one replica.
    const n = 6;
    const asked = counter(n);
    let open!: () => void;
    const gate = { asked: asked.hit, open: new Promise<void>((r) => (open = r)) };
    const names = Array.from({ length: n }, (_, i) => `parked-${i}`);
    const clients = await Promise.all(names.map((w) => v2Client(w, gate)));
    // Legacy sessions too, opened through HAProxy, so each replica holds some.
    const sessions = await Promise.all(Array.from({ length: 6 }, (_, i) => openRawLegacySession(lb!.url, `session-${i}`)));
    const calls = clients.map((c, i) => c.callTool({ name: 'trigger-elicitation-request', arguments: {} }).then((r) => ({ ok: true as const, text: textOf(r), who: names[i] }), (err: unknown) => ({ ok: false as const, err: String(err), who: names[i], at: Date.now() })));
    let parked: number[];
    let victim: number;
    try {
      await asked.reached;
      // Every call is parked now (its client holds the input request); pick the replica holding the most.
      parked = await Promise.all(replicas.map(async (r) => (await stats(r)).parked ?? 0));
      expect(parked.reduce((a, b) => a + b, 0)).toBe(n);
      victim = parked.indexOf(Math.max(...parked));
      const exited = new Promise((r) => replicas[victim].cli.child.once('exit', r));
      // A SIGKILLed bridge cannot stop its server-everything children, which outlive a closed stdin: the test does.
      const orphans = childPidsOf(replicas[victim].cli.child.pid!);
      replicas[victim].cli.child.kill('SIGKILL');
      await exited;
      for (const pid of orphans) killQuietly(pid);
    } finally {
      // Whatever failed above, no call stays parked into the next case.
      open();
    }
    const released = Date.now();
    const victimTag = keys.tagOf(replicas[victim].url);
    const results = await Promise.all(calls);
    const failed = results.filter((r) => !r.ok);
    expect(failed).toHaveLength(parked[victim]);
    for (const f of failed) {
      expect(f.err).toMatch(/requestState expired: bridge instance [0-9a-f]{12}, which held the parked call, is gone/);
      expect(f.err).toContain(victimTag);
      // Well inside the 20 s call deadline: a refused connection is known at once.
      expect(f.at - released).toBeLessThan(10_000);
    }
    for (const r of results) if (r.ok) expect(r.text).toContain(`Name: ${r.who}\n`);
    // A session the dead replica held: 404, so the SDK initializes again; the others go on.
    for (const [i, s] of sessions.entries()) {
      const res = await s.post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: `session-${i}` } } });
      if (s.sessionId.startsWith(`${victimTag}.`)) {
        expect(res.status).toBe(404);
        expect(await res.json()).toMatchObject({ error: { code: -32001, message: expect.stringContaining('the bridge instance holding it is gone') } });
      } else {
        expect(await readMessages(res)).toEqual([expect.objectContaining({ id: 1, result: expect.objectContaining({ content: [{ type: 'text', text: `Echo: session-${i}` }] }) })]);
        expect(await s.end()).toBe(200);
      }
    }
    expect(sessions.some((s) => s.sessionId.startsWith(`${victimTag}.`))).toBe(true);
    await Promise.all(clients.map((c) => c.close()));
    // Bring the replica back for the next case, same port.
    replicas[victim] = await startReplica(ports[victim], ports, upstream, REPLICA_ARGS);
  }, 90_000);

  it("HAProxy's answers carry no replica Keep-Alive hint: a client keeps its own idle limit, under HAProxy's", async () => {
    // A replica tells its direct clients `Keep-Alive: timeout=65`; through HAProxy, which closes an idle
    // client connection at 10 s, a client believing that reuses a closed connection and its POST fails.
    const direct = await fetch(`${replicas[0].url}/healthz`);
    expect(direct.headers.get('keep-alive')).toBe('timeout=65');
    const viaLb = await fetch(`${lb!.url}/healthz`);
    expect(viaLb.status).toBe(200);
    expect(viaLb.headers.get('keep-alive')).toBeNull();
  });

  it('a rolling restart of all three under load fails no new call', async () => {
    let stop = false;
    const failures: string[] = [];
    const done = { modern: 0, legacy: 0, mrtr: 0 };
    const loop = async (kind: keyof typeof done, w: number, once: (who: string) => Promise<void>) => {
      for (let i = 0; !stop && i < 10_000; i++) {
        const who = `${kind}-${w}-${i}`;
        try {
          await once(who);
          done[kind]++;
        } catch (err) {
          failures.push(`${who} at ${new Date().toISOString()}: ${withCause(err)}`);
        }
      }
    };
    const load = [
      ...[0, 1].map((w) => loop('modern', w, async (who) => {
        const c = await v2Client(who);
        try {
          expect(textOf(await c.callTool({ name: 'echo', arguments: { message: who } }))).toBe(`Echo: ${who}`);
        } finally {
          await c.close();
        }
      })),
      ...[0, 1].map((w) => loop('legacy', w, async (who) => {
        const c = await v1Client(who, 'streamable');
        try {
          expect(textOf((await c.callTool({ name: 'echo', arguments: { message: who } })) as { content?: unknown })).toBe(`Echo: ${who}`);
        } finally {
          await c.close();
        }
      })),
      loop('mrtr', 0, async (who) => {
        const c = await v2Client(who);
        try {
          await mrtrRound(c, who);
        } finally {
          await c.close();
        }
      }),
    ];
    try {
      for (let i = 0; i < replicas.length; i++) {
        // SIGTERM: /healthz 503 and new work handed to peers first, then the ordinary drain; then the same port again.
        const exited = new Promise((r) => replicas[i].cli.child.once('exit', r));
        replicas[i].cli.child.kill('SIGTERM');
        await exited;
        replicas[i] = await startReplica(ports[i], ports, upstream, REPLICA_ARGS);
        await lb!.serverUp(i);
      }
    } finally {
      stop = true;
      await Promise.all(load);
    }
    expect(failures, `HAProxy's abnormal terminations:\n${abnormal(lb!.log()).join('\n')}`).toEqual([]);
    expect(done.modern).toBeGreaterThan(3);
    expect(done.legacy).toBeGreaterThan(3);
    expect(done.mrtr).toBeGreaterThan(0);
  }, 180_000);
}

describe('three replicas behind HAProxy round robin, wrapping server-everything over stdio', () => {
  beforeAll(() => setUp(['--', ...EVERYTHING_STDIO_COMMAND]), 60_000);
  afterAll(tearDown);
  retriesCross();
  mixedLoad();
  faults();
});

describe('three replicas behind HAProxy round robin, in front of one legacy Streamable HTTP server', () => {
  let server: RunningServer | undefined;
  beforeAll(async () => {
    server = await startEverything('streamableHttp');
    await setUp(['--upstream', `${server.url}/mcp`]);
  }, 60_000);
  afterAll(async () => {
    await tearDown();
    await server?.close();
  });
  retriesCross();
  mixedLoad();
});

/** An error and what caused it: "fetch failed" alone does not say which socket broke, or how. */
function withCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string } } | undefined)?.cause;
  return cause === undefined ? String(err) : `${String(err)} (cause: ${String(cause)}${cause.code ? `, ${cause.code}` : ''})`;
}

/**
 * HAProxy log lines (httplog) whose termination state is not the normal "--": a side that broke a
 * connection. Two kinds are left out as routine: CR on "<BADREQ>" (a client's idle keep-alive
 * connection closed with no request) and CD on a GET (a client gone from its SSE stream, which HAProxy
 * notices at the next heartbeat).
 */
function abnormal(log: string[]): string[] {
  const routine = (l: string) => (/ CR-- /.test(l) && l.includes('"<BADREQ>"')) || (/ CD-- /.test(l) && l.includes('"GET '));
  return log.filter((l) => / (?!--)[A-Za-z-]{4} \d+\/\d+\/\d+\/\d+\/\+?\d+ /.test(l) && !routine(l)).slice(-60);
}
