import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { LegacyUpstreamSession, UpstreamInit } from '../../src/contracts/upstream.js';
import { LegacyStdioLink } from '../../src/links/legacy-stdio-link.js';
import type { MessagePipe } from '../../src/links/message-pipe.js';
import { openPipeSession } from '../../src/links/pipe-session.js';
import { StdioProcess } from '../../src/links/stdio-process.js';
import { silentLogger } from '../../src/log.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';

const [COMMAND, ...ARGS] = EVERYTHING_STDIO_COMMAND;
const INIT: UpstreamInit = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'links-test', version: '1.0.0' } };

const links: LegacyStdioLink[] = [];
const processes: StdioProcess[] = [];

function newLink(): LegacyStdioLink {
  const link = new LegacyStdioLink({ command: COMMAND, args: ARGS, logger: silentLogger, shutdownGraceMs: 1_000 });
  links.push(link);
  return link;
}

/** A real pipe to server-everything that also records what the session writes to it. */
function tappedEverything(): { pipe: MessagePipe; sent: JSONRPCMessage[]; child: StdioProcess } {
  const child = StdioProcess.spawn({ command: COMMAND, args: ARGS, logger: silentLogger, stderr: 'discard' });
  processes.push(child);
  const sent: JSONRPCMessage[] = [];
  const pipe: MessagePipe = {
    send: (m) => {
      sent.push(...(Array.isArray(m) ? m : [m]));
      return child.send(m);
    },
    onMessage: (l) => child.onMessage(l),
    onClose: (l) => child.onClose(l),
    close: () => child.close(1_000),
  };
  return { pipe, sent, child };
}

function textOf(result: Record<string, unknown>): string {
  return (result.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n');
}

afterEach(async () => {
  await Promise.all(links.splice(0).map((l) => l.close()));
  await Promise.all(processes.splice(0).map((p) => p.close(1_000)));
});

describe('PipeSession over server-everything (stdio)', () => {
  it('opens a session whose tools/list includes echo and whose echo answers', async () => {
    const session = await newLink().openSession(INIT);
    expect(session.correlates).toBe(false);
    expect(session.initializeResult.protocolVersion).toBe('2025-06-18');
    const list = await session.call({ method: 'tools/list', params: {} });
    expect('result' in list && (list.result.tools as Array<{ name: string }>).map((t) => t.name)).toContain('echo');
    const echo = await session.call({ method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi there' } } });
    expect('result' in echo && textOf(echo.result)).toContain('hi there');
  });

  it('sends its own wire ids and tokens, and maps progress back to the caller token', async () => {
    const { pipe, sent } = tappedEverything();
    const session = await openPipeSession(pipe, INIT, { logger: silentLogger, kind: 'stdio' });
    const progress: JSONRPCNotification[] = [];
    const outcome = await session.call(
      { id: 'caller-id', method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 }, _meta: { progressToken: 'caller-token' } } },
      { onNotification: (n) => progress.push(n) },
    );
    expect('result' in outcome).toBe(true);
    expect(progress.map((n) => [n.method, n.params?.progressToken, n.params?.progress])).toEqual([
      ['notifications/progress', 'caller-token', 1],
      ['notifications/progress', 'caller-token', 2],
    ]);
    const wire = sent.find((m) => 'method' in m && m.method === 'tools/call') as JSONRPCRequest;
    expect(wire.id).not.toBe('caller-id');
    expect((wire.params as { _meta: { progressToken: unknown } })._meta.progressToken).not.toBe('caller-token');
  });

  it("routes elicitation/create to the in-flight call's onServerRequest and completes with its answer", async () => {
    const session = await newLink().openSession({ ...INIT, capabilities: { elicitation: {} } });
    const seen: JSONRPCRequest[] = [];
    const outcome = await session.call(
      { method: 'tools/call', params: { name: 'trigger-elicitation-request', arguments: {} } },
      {
        onServerRequest: async (req) => {
          seen.push(req);
          return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
        },
      },
    );
    expect(seen.map((r) => r.method)).toEqual(['elicitation/create']);
    expect('result' in outcome && textOf(outcome.result)).toContain('Name: Ada Lovelace');
  });

  it('sends an unsolicited roots/list to the unsolicited handler when no call is in flight', async () => {
    const session = await newLink().openSession({ ...INIT, capabilities: { roots: { listChanged: true } } });
    const req = await new Promise<JSONRPCRequest>((resolve) => {
      session.setUnsolicitedHandlers({ notification: () => {}, request: async (r) => (resolve(r), { roots: [] }) });
    });
    expect(req.method).toBe('roots/list');
  });

  it('resolves a call in flight with an error as soon as the child is SIGKILLed (from the exit, not a timeout)', async () => {
    const link = newLink();
    const session = await link.openSession(INIT);
    const [pid] = link.pids();
    // 20 s of work reporting progress every 100 ms: the first report says the child is running it.
    let running!: () => void;
    const started = new Promise<void>((r) => (running = r));
    const call = session.call(
      { method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 20, steps: 200 }, _meta: { progressToken: 'p' } } },
      { onNotification: () => running() },
    );
    await started;
    const closed = new Promise<string>((resolve) => session.onClose(resolve));
    const t0 = Date.now();
    process.kill(pid, 'SIGKILL');
    const outcome = await call;
    // The message names the exit; the bound only has to separate it from the call's 20 s and the minutes-long timeout.
    expect('error' in outcome && outcome.error).toMatchObject({ code: -32603, message: expect.stringMatching(/exited\/closed: .*SIGKILL/) });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(await closed).toMatch(/SIGKILL/);
    expect(session.closed).toBe(true);
    // After an exit, the next session is simply a fresh child.
    const next = await link.openSession(INIT);
    expect(link.pids()).not.toContain(pid);
    expect('result' in (await next.call({ method: 'ping' }))).toBe(true);
  });

  it('times a call out with -32603, sends notifications/cancelled with the wire id, and stays usable', async () => {
    const { pipe, sent } = tappedEverything();
    const session = await openPipeSession(pipe, INIT, { logger: silentLogger, kind: 'stdio' });
    const outcome = await session.call(
      { method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 20, steps: 1 } } },
      { timeoutMs: 200 },
    );
    expect('error' in outcome && outcome.error).toMatchObject({ code: -32603, message: 'upstream tools/call timed out after 200 ms' });
    const wire = sent.find((m) => 'method' in m && m.method === 'tools/call') as JSONRPCRequest;
    const cancel = sent.find((m) => 'method' in m && m.method === 'notifications/cancelled') as JSONRPCNotification;
    expect(cancel.params).toEqual({ requestId: wire.id, reason: 'timed out after 200 ms' });
    const echo = await session.call({ method: 'tools/call', params: { name: 'echo', arguments: { message: 'still here' } } });
    expect('result' in echo && textOf(echo.result)).toContain('still here');
  });

  it('cancels a call upstream when its signal aborts', async () => {
    const { pipe, sent } = tappedEverything();
    const session: LegacyUpstreamSession = await openPipeSession(pipe, INIT, { logger: silentLogger, kind: 'stdio' });
    const ac = new AbortController();
    const call = session.call({ method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 20, steps: 1 } } }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    const outcome = await call;
    expect('error' in outcome && outcome.error).toMatchObject({ code: -32603, message: 'upstream tools/call cancelled' });
    expect(sent.some((m) => 'method' in m && m.method === 'notifications/cancelled')).toBe(true);
  });
});
