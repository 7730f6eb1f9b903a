import type { JSONRPCNotification } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { ModernStdioLink } from '../../src/links/modern-stdio-link.js';
import { silentLogger } from '../../src/log.js';
import { MODERN_STDIO_COMMAND } from '../helpers/modern-fixture.js';
import { waitFor } from '../helpers/wait-for.js';

const envelope = (extra: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'links-modern-stdio-test', version: '1.0.0' },
  ...extra,
});

const [command, ...args] = MODERN_STDIO_COMMAND as [string, ...string[]];
const textOf = (outcome: unknown) => (outcome as { result: { content: { text: string }[] } }).result.content[0]?.text;
const tool = (name: string, args: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) => ({
  method: 'tools/call',
  params: { _meta: envelope(meta), name, arguments: args },
});


/** The fixture's `last-cancelled` answer: whether the last slow call was cancelled (null while none ended), and how many run. */
async function lastCancelled(link: ModernStdioLink): Promise<{ cancelled: boolean | null; running: number }> {
  const outcome = (await link.call(tool('last-cancelled'))) as { result: { structuredContent: { cancelled: boolean | null; running: number } } };
  return outcome.result.structuredContent;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('ModernStdioLink against the modern fixture over stdio', () => {
  const links: ModernStdioLink[] = [];
  const newLink = () => {
    const link = new ModernStdioLink({ command, args, logger: silentLogger, name: 'modern-fixture' });
    links.push(link);
    return link;
  };
  afterEach(async () => {
    for (const l of links.splice(0)) await l.close();
  });

  it('echo: a tools/call returns the tool result', async () => {
    expect(textOf(await newLink().call(tool('echo', { message: 'hi' })))).toBe('Echo: hi');
  });

  it('concurrent calls on one child each get their own answer', async () => {
    const link = newLink();
    const outcomes = await Promise.all(['a', 'b', 'c'].map((m) => link.call(tool('echo', { message: m }))));
    expect(outcomes.map(textOf)).toEqual(['Echo: a', 'Echo: b', 'Echo: c']);
  });

  it('progress reaches the call with the caller’s own token', async () => {
    const link = newLink();
    const seen: JSONRPCNotification[] = [];
    const outcome = await link.call(tool('progress', { steps: 2 }, { progressToken: 7 }), { onNotification: (n) => seen.push(n) });
    expect(textOf(outcome)).toBe('done 2 steps');
    expect(seen.map((n) => (n.params as { progressToken: unknown }).progressToken)).toEqual([7, 7]);
  });

  it('notifications/message goes to the one call that set logLevel', async () => {
    const link = newLink();
    const seen: JSONRPCNotification[] = [];
    const outcome = await link.call(tool('log', { level: 'warning', data: 'careful' }, { 'io.modelcontextprotocol/logLevel': 'info' }), { onNotification: (n) => seen.push(n) });
    expect(textOf(outcome)).toBe('logged warning');
    expect(seen).toMatchObject([{ method: 'notifications/message', params: { level: 'warning', data: 'careful' } }]);
  });

  it('listen: ack and tools/list_changed after add-tool carry the caller’s id as subscriptionId', async () => {
    const link = newLink();
    const seen: JSONRPCNotification[] = [];
    const listening = link.call(
      { id: 'listen-s1', method: 'subscriptions/listen', params: { _meta: envelope(), notifications: { toolsListChanged: true } } },
      { onNotification: (n) => seen.push(n) },
    );
    const ack = await waitFor(() => seen.find((n) => n.method === 'notifications/subscriptions/acknowledged'));
    expect(ack.params).toMatchObject({ _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-s1' }, notifications: { toolsListChanged: true } });
    expect(textOf(await link.call(tool('add-tool', { name: 'late-tool' })))).toBe('added late-tool');
    const changed = await waitFor(() => seen.find((n) => n.method === 'notifications/tools/list_changed'));
    expect(changed.params).toMatchObject({ _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-s1' } });
    await link.close();
    expect(await listening).toMatchObject({ error: { code: -32603 } });
  });

  it('listen with resourceSubscriptions receives resources/updated after bump; abort ends it', async () => {
    const link = newLink();
    const seen: JSONRPCNotification[] = [];
    const controller = new AbortController();
    const listening = link.call(
      { id: 42, method: 'subscriptions/listen', params: { _meta: envelope(), notifications: { resourceSubscriptions: ['test://counter'] } } },
      { onNotification: (n) => seen.push(n), signal: controller.signal },
    );
    await waitFor(() => seen.find((n) => n.method === 'notifications/subscriptions/acknowledged'));
    await link.call(tool('bump'));
    const updated = await waitFor(() => seen.find((n) => n.method === 'notifications/resources/updated'));
    expect(updated.params).toMatchObject({ uri: 'test://counter', _meta: { 'io.modelcontextprotocol/subscriptionId': 42 } });
    controller.abort();
    expect(await listening).toMatchObject({ error: { message: expect.stringMatching(/cancelled/) } });
    // Once ended, nothing more reaches the listen's handlers. A second listen, opened after it, stands for
    // "the bump's notifications have all been delivered": the child fans each one out to its listens in order.
    const before = seen.length;
    const later: JSONRPCNotification[] = [];
    void link.call(
      { id: 43, method: 'subscriptions/listen', params: { _meta: envelope(), notifications: { resourceSubscriptions: ['test://counter'] } } },
      { onNotification: (n) => later.push(n) },
    );
    await waitFor(() => later.find((n) => n.method === 'notifications/subscriptions/acknowledged'), 5_000, 'the second listen acknowledged');
    await link.call(tool('bump'));
    await waitFor(() => later.find((n) => n.method === 'notifications/resources/updated'), 5_000, 'resources/updated on the second listen');
    expect(seen.length).toBe(before);
  });

  it('abort sends notifications/cancelled and the fixture reports the call cancelled', async () => {
    const link = newLink();
    const controller = new AbortController();
    const pending = link.call(tool('slow', { ms: 5_000 }), { signal: controller.signal });
    // Cancel only once the server runs the call (a loaded machine may start the child late).
    await waitFor(async () => ((await lastCancelled(link)).running > 0 ? true : undefined), 5_000, 'the slow call running in the child');
    controller.abort();
    expect(await pending).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/cancelled/) } });
    const cancelled = await waitFor(async () => (await lastCancelled(link)).cancelled ?? undefined, 3_000, 'the slow call ending in the child');
    expect(cancelled).toBe(true);
  });

  it('child killed mid-call: the call resolves with an error at once, and the next call respawns', async () => {
    const link = newLink();
    expect(textOf(await link.call(tool('echo', { message: 'before' })))).toBe('Echo: before');
    const firstPid = link.pid!;
    const pending = link.call(tool('slow', { ms: 60_000 }));
    // The fixture counts the slow calls it is running; ask it (a second call on the same child) until it has ours.
    await waitFor(async () => ((await lastCancelled(link)).running > 0 ? true : undefined), 5_000, 'the slow call running in the child');
    const killedAt = Date.now();
    process.kill(firstPid, 'SIGKILL');
    const outcome = await pending;
    // The message names the exit; the bound only has to separate it from the call's 60 s and the minutes-long timeout.
    expect(outcome).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/exited on signal SIGKILL/) } });
    expect(Date.now() - killedAt).toBeLessThan(5_000);
    expect(textOf(await link.call(tool('echo', { message: 'after' })))).toBe('Echo: after');
    expect(link.pid).toBeDefined();
    expect(link.pid).not.toBe(firstPid);
  });

  it('close() ends the child', async () => {
    const link = newLink();
    await link.call(tool('echo', { message: 'x' }));
    const pid = link.pid!;
    await link.close();
    expect(alive(pid)).toBe(false);
    expect(await link.call(tool('echo', { message: 'y' }))).toMatchObject({ error: { message: expect.stringMatching(/closed/) } });
  });
});
