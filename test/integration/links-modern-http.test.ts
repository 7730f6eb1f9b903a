import type { JSONRPCNotification } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModernHttpLink } from '../../src/links/modern-http-link.js';
import { silentLogger } from '../../src/log.js';
import { startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { waitFor } from '../helpers/wait-for.js';

const envelope = (extra: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
  'io.modelcontextprotocol/clientInfo': { name: 'links-modern-http-test', version: '1.0.0' },
  ...extra,
});

const textOf = (outcome: unknown) => ((outcome as { result: { content: { text: string }[] } }).result.content[0]?.text);


describe('ModernHttpLink against the modern fixture', () => {
  let server: RunningModernServer;
  const links: ModernHttpLink[] = [];
  const newLink = (opts: Partial<ConstructorParameters<typeof ModernHttpLink>[0]> = {}) => {
    const link = new ModernHttpLink({ url: server.url, headers: {}, logger: silentLogger, ...opts });
    links.push(link);
    return link;
  };

  beforeAll(async () => {
    server = await startModernHttpServer();
  });
  afterAll(async () => {
    for (const l of links) await l.close();
    await server.close();
  });

  it('echo: a tools/call returns the tool result', async () => {
    const outcome = await newLink().call({ method: 'tools/call', params: { _meta: envelope(), name: 'echo', arguments: { message: 'hi' } } });
    expect(textOf(outcome)).toBe('Echo: hi');
  });

  it('server/discover resolves with the DiscoverResult and its serverInfo', async () => {
    const outcome = await newLink().call({ method: 'server/discover', params: { _meta: envelope() } });
    expect(outcome).toMatchObject({ result: { supportedVersions: ['2026-07-28'], _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'modern-fixture' } } } });
  });

  it('x-mcp-header: tenant-echo sees Mcp-Param-Region even on a cold cache', async () => {
    const link = newLink();
    const outcome = await link.call({ method: 'tools/call', params: { _meta: envelope(), name: 'tenant-echo', arguments: { region: 'eu-west' } } });
    expect(outcome).toMatchObject({ result: { structuredContent: { region: 'eu-west', header: 'eu-west' } } });
    expect(link.paramHeaders('tenant-echo')).toEqual([{ name: 'Region', path: ['region'], type: 'string' }]);
  });

  it('x-mcp-header: a non-ASCII value reaches the tool base64-encoded in the header', async () => {
    const outcome = await newLink().call({ method: 'tools/call', params: { _meta: envelope(), name: 'tenant-echo', arguments: { region: 'Zürich' } } });
    expect(outcome).toMatchObject({ result: { structuredContent: { region: 'Zürich', header: `=?base64?${Buffer.from('Zürich').toString('base64')}?=` } } });
  });

  it('-32020 on a stale header cache: the link refreshes tools/list and retries once with the header', async () => {
    const admin = newLink();
    const call = (name: string, args: Record<string, unknown>) => admin.call({ method: 'tools/call', params: { _meta: envelope(), name, arguments: args } });
    await call('add-tool', { name: 'grows-header' });
    const link = newLink();
    await link.call({ method: 'tools/list', params: { _meta: envelope() } });
    expect(link.paramHeaders('grows-header')).toBeUndefined();
    await call('add-tool', { name: 'grows-header', header: 'Tenant' });
    const outcome = await link.call({ method: 'tools/call', params: { _meta: envelope(), name: 'grows-header', arguments: { tenant: 'acme' } } });
    expect(outcome).toMatchObject({ result: { structuredContent: { header: 'acme' } } });
    expect(link.paramHeaders('grows-header')).toEqual([{ name: 'Tenant', path: ['tenant'], type: 'string' }]);
  });

  it('the caller id is sent verbatim and the MRTR input_required result passes through untouched', async () => {
    const outcome = await newLink().call({ id: 'caller-7', method: 'tools/call', params: { _meta: envelope(), name: 'ask-name', arguments: {} } });
    expect(outcome).toMatchObject({ result: { resultType: 'input_required', inputRequests: { name: { method: 'elicitation/create' } } } });
  });

  it('MRTR retries pass through: ask-name takes three rounds with byte-exact requestState', async () => {
    const link = newLink();
    const call = (extra: Record<string, unknown>) => link.call({ method: 'tools/call', params: { _meta: envelope(), name: 'ask-name', arguments: {}, ...extra } });
    const r1 = (await call({})) as { result: Record<string, unknown> };
    expect(r1.result).toMatchObject({ resultType: 'input_required', inputRequests: { name: { method: 'elicitation/create' } } });
    const r2 = (await call({ inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } } })) as { result: Record<string, unknown> };
    expect(r2.result).toMatchObject({ resultType: 'input_required', inputRequests: { confirm: { method: 'elicitation/create' } }, requestState: 'Ada' });
    const r3 = await call({ inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState: r2.result.requestState });
    expect(textOf(r3)).toBe('Hello, Ada!');
  });

  it('MRTR fixture tools: ask-two asks two inputs at once, sample asks for sampling', async () => {
    const link = newLink();
    const caps = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, roots: {}, sampling: {} } };
    const call = (name: string, extra: Record<string, unknown> = {}) => link.call({ method: 'tools/call', params: { _meta: envelope(caps), name, arguments: {}, ...extra } });
    expect(await call('ask-two')).toMatchObject({ result: { resultType: 'input_required', inputRequests: { color: { method: 'elicitation/create' }, roots: { method: 'roots/list' } } } });
    const two = await call('ask-two', { inputResponses: { color: { action: 'accept', content: { color: 'teal' } }, roots: { roots: [{ uri: 'file:///w' }] } } });
    expect(textOf(two)).toBe('color=teal roots=file:///w');
    expect(await call('sample')).toMatchObject({ result: { resultType: 'input_required', inputRequests: { llm: { method: 'sampling/createMessage' } } } });
    const sampled = await call('sample', { inputResponses: { llm: { role: 'assistant', content: { type: 'text', text: 'hi there' }, model: 'm' } } });
    expect(textOf(sampled)).toBe('sampled: hi there');
  });

  it('progress notifications of an SSE reply reach onNotification before the result', async () => {
    const seen: JSONRPCNotification[] = [];
    const outcome = await newLink().call(
      { method: 'tools/call', params: { _meta: envelope({ progressToken: 'tok-1' }), name: 'progress', arguments: { steps: 3 } } },
      { onNotification: (n) => seen.push(n) },
    );
    expect(textOf(outcome)).toBe('done 3 steps');
    expect(seen.map((n) => [n.method, (n.params as { progressToken: unknown; progress: number }).progress])).toEqual([
      ['notifications/progress', 1],
      ['notifications/progress', 2],
      ['notifications/progress', 3],
    ]);
  });

  it('listen: the ack, then tools/list_changed after add-tool, then the graceful end on link close', async () => {
    const listenLink = newLink();
    const seen: JSONRPCNotification[] = [];
    const listening = listenLink.call(
      { id: 'listen-1', method: 'subscriptions/listen', params: { _meta: envelope(), notifications: { toolsListChanged: true } } },
      { onNotification: (n) => seen.push(n) },
    );
    await waitFor(() => seen.find((n) => n.method === 'notifications/subscriptions/acknowledged'));
    await newLink().call({ method: 'tools/call', params: { _meta: envelope(), name: 'add-tool', arguments: { name: 'late-tool' } } });
    const changed = await waitFor(() => seen.find((n) => n.method === 'notifications/tools/list_changed'));
    expect(changed.params).toMatchObject({ _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' } });
    await listenLink.close();
    const end = await listening;
    expect('error' in end && end.error.message).toMatch(/closed/);
  });

  it('listen with resourceSubscriptions receives resources/updated after bump', async () => {
    const listenLink = newLink();
    const seen: JSONRPCNotification[] = [];
    const controller = new AbortController();
    const listening = listenLink.call(
      { id: 'listen-r', method: 'subscriptions/listen', params: { _meta: envelope(), notifications: { resourceSubscriptions: ['test://counter'] } } },
      { onNotification: (n) => seen.push(n), signal: controller.signal },
    );
    await waitFor(() => seen.find((n) => n.method === 'notifications/subscriptions/acknowledged'));
    await newLink().call({ method: 'tools/call', params: { _meta: envelope(), name: 'bump', arguments: {} } });
    const updated = await waitFor(() => seen.find((n) => n.method === 'notifications/resources/updated'));
    expect(updated.params).toMatchObject({ uri: 'test://counter', _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-r' } });
    controller.abort();
    expect(await listening).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/cancelled/) } });
  });

  it('listen resolves with the graceful SubscriptionsListenResult when the server ends it', async () => {
    const own = await startModernHttpServer();
    try {
      const link = newLink({ url: own.url });
      const seen: JSONRPCNotification[] = [];
      const listening = link.call(
        { id: 7, method: 'subscriptions/listen', params: { _meta: envelope(), notifications: { toolsListChanged: true } } },
        { onNotification: (n) => seen.push(n) },
      );
      await waitFor(() => seen.find((n) => n.method === 'notifications/subscriptions/acknowledged'));
      await own.close();
      expect(await listening).toEqual({ result: expect.objectContaining({ resultType: 'complete', _meta: expect.objectContaining({ 'io.modelcontextprotocol/subscriptionId': 7 }) }) });
    } finally {
      await own.close();
    }
  });

  it('abort closes the stream and the fixture reports the call cancelled', async () => {
    const link = newLink();
    const controller = new AbortController();
    const pending = link.call({ method: 'tools/call', params: { _meta: envelope(), name: 'slow', arguments: { ms: 5_000 } } }, { signal: controller.signal });
    await waitFor(() => (server.state.slowRunning > 0 ? true : undefined));
    controller.abort();
    const outcome = await pending;
    expect(outcome).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/cancelled/) } });
    await waitFor(() => (server.state.lastCancelled === true ? true : undefined));
    const report = await link.call({ method: 'tools/call', params: { _meta: envelope(), name: 'last-cancelled', arguments: {} } });
    expect(report).toMatchObject({ result: { structuredContent: { cancelled: true } } });
  });

  it('timeoutMs: the call resolves with a -32603 naming the deadline', async () => {
    const outcome = await newLink().call({ method: 'tools/call', params: { _meta: envelope(), name: 'slow', arguments: { ms: 3_000 } } }, { timeoutMs: 150 });
    expect(outcome).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/timed out after 150 ms/) } });
  });

  it('a modern JSON-RPC error body wins over the HTTP status (400 + -32022)', async () => {
    const outcome = await newLink().call({ method: 'tools/list', params: { _meta: envelope({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) } });
    expect(outcome).toMatchObject({ error: { code: -32022, data: { supported: ['2026-07-28'] } } });
  });

  it('an HTTP error without a JSON-RPC body becomes -32603 naming the status', async () => {
    const link = newLink({ url: server.url.replace('/mcp', '/elsewhere') });
    const outcome = await link.call({ method: 'tools/list', params: { _meta: envelope() } });
    expect(outcome).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/^upstream answered HTTP 404/) } });
  });

  it('a closed port resolves with -32603 "upstream unreachable"', async () => {
    const link = newLink({ url: 'http://127.0.0.1:1/mcp' });
    const outcome = await link.call({ method: 'tools/list', params: { _meta: envelope() } });
    expect(outcome).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/^upstream unreachable/) } });
  });
});
