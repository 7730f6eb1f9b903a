import type { InitializeRequestParams, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LegacyToLegacyBridge } from '../../bridges/legacy-to-legacy/index.js';
import type { LegacyChannel, LegacyRequestContext, LegacySessionHandler, LegacySessionInfo } from '../../src/contracts/downstream.js';
import { LegacyStdioLink } from '../../src/links/legacy-stdio-link.js';
import { SessionPool } from '../../src/links/session-pool.js';
import { createLogger, silentLogger } from '../../src/log.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait-for.js';

const VERSION = '2025-06-18';
type Params = Record<string, unknown> | undefined;
type Answer = (method: string, params: Params) => Promise<Record<string, unknown>>;

/**
 * A downstream legacy client as the bridge sees it: a real LegacyChannel that
 * records what the bridge sends it, and answers server→client requests.
 */
class RecordingClient implements LegacyChannel {
  /** Unsolicited notifications (the session's channel). */
  readonly notifications: JSONRPCNotification[] = [];
  /** Notifications tied to a request (the request's own stream). */
  readonly related: JSONRPCNotification[] = [];
  readonly requests: Array<{ method: string; params: Params; via: 'channel' | 'request' }> = [];
  info!: LegacySessionInfo;
  session!: LegacySessionHandler;
  #seq = 0;

  constructor(
    readonly name: string,
    readonly capabilities: Record<string, unknown> = {},
    private readonly answer: Answer = async () => ({}),
  ) {}

  notify(n: JSONRPCNotification): boolean {
    this.notifications.push(n);
    return true;
  }

  request(method: string, params: Params): Promise<Record<string, unknown>> {
    this.requests.push({ method, params, via: 'channel' });
    return this.answer(method, params);
  }

  async open(bridge: LegacyToLegacyBridge) {
    const params = { protocolVersion: VERSION, capabilities: this.capabilities, clientInfo: { name: this.name, version: '1.0.0' } } as InitializeRequestParams;
    const base = { id: this.name, clientCapabilities: params.capabilities, clientInfo: params.clientInfo, transport: 'stdio' as const };
    const opened = await bridge.openSession(params, base, this);
    this.info = { ...base, protocolVersion: opened.result.protocolVersion };
    this.session = opened.session;
    return opened.result;
  }

  call(method: string, params?: Record<string, unknown>, signal = new AbortController().signal): Promise<JSONRPCResponse> {
    const id = `${this.name}-${++this.#seq}`;
    const req = (params ? { jsonrpc: '2.0', id, method, params } : { jsonrpc: '2.0', id, method }) as JSONRPCRequest;
    const ctx: LegacyRequestContext = {
      session: this.info,
      signal,
      notify: (n) => {
        this.related.push(n);
        return true;
      },
      request: (m, p) => {
        this.requests.push({ method: m, params: p, via: 'request' });
        return this.answer(m, p);
      },
    };
    return this.session.handleRequest(req, ctx);
  }

  updatedUris(): string[] {
    return this.notifications.filter((n) => n.method === 'notifications/resources/updated').map((n) => (n.params as { uri: string }).uri);
  }

  messages(): string[] {
    return this.notifications.filter((n) => n.method === 'notifications/message').map((n) => String((n.params as { data: unknown }).data));
  }
}

function resultOf(r: JSONRPCResponse): Record<string, unknown> {
  if ('error' in r) throw new Error(`unexpected error ${JSON.stringify(r.error)}`);
  return r.result as Record<string, unknown>;
}

function textOf(r: JSONRPCResponse): string {
  return (resultOf(r).content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n');
}

describe('legacy-to-legacy over a pool of server-everything stdio children', () => {
  let link: LegacyStdioLink;
  let pool: SessionPool;
  let bridge: LegacyToLegacyBridge;
  /** The bridge's log records (debug and up), for what it decided without telling a client. */
  let logged: Array<Record<string, unknown>>;

  beforeEach(() => {
    logged = [];
    link = new LegacyStdioLink({ command: EVERYTHING_STDIO_COMMAND[0], args: EVERYTHING_STDIO_COMMAND.slice(1), logger: silentLogger, callTimeoutMs: 10_000 });
    pool = new SessionPool(link, { max: 1, idleMs: 60_000, logger: silentLogger });
    const logger = createLogger('debug', {}, (line) => void logged.push(JSON.parse(line) as Record<string, unknown>));
    bridge = new LegacyToLegacyBridge({ upstream: { kind: 'pooled', pool }, logger, callTimeoutMs: 10_000 });
  });

  afterEach(async () => {
    await bridge.close();
    await pool.close();
    await link.close();
  });

  it('answers initialize with the upstream InitializeResult for the client version, then relays tools/list and echo with the client ids', async () => {
    const client = new RecordingClient('a');
    const result = await client.open(bridge);
    expect(result.protocolVersion).toBe(VERSION);
    expect(result.serverInfo.name).toBe('mcp-servers/everything');
    expect(result.capabilities.resources).toMatchObject({ subscribe: true });

    const list = await client.call('tools/list');
    expect(list.id).toBe('a-1');
    expect((resultOf(list).tools as Array<{ name: string }>).map((t) => t.name)).toContain('echo');

    const echo = await client.call('tools/call', { name: 'echo', arguments: { message: 'hi there' } });
    expect(echo.id).toBe('a-2');
    expect(textOf(echo)).toBe('Echo: hi there');
  });

  it('forwards elicitation/create to the client request that caused it and sends its answer back upstream', async () => {
    const client = new RecordingClient('a', { elicitation: {} }, async (method) => {
      if (method !== 'elicitation/create') throw new Error(`unexpected ${method}`);
      return { action: 'accept', content: { name: 'Ada Lovelace' } };
    });
    await client.open(bridge);
    const r = await client.call('tools/call', { name: 'trigger-elicitation-request', arguments: {} });
    expect(textOf(r)).toContain('- Name: Ada Lovelace');
    expect(client.requests.map((q) => [q.method, q.via])).toEqual([['elicitation/create', 'request']]);
  });

  it('shares one child between two sessions and keeps their subscriptions apart', async () => {
    const a = new RecordingClient('a');
    const b = new RecordingClient('b');
    await a.open(bridge);
    await b.open(bridge);
    expect(link.pids()).toHaveLength(1);

    const X = 'demo://resource/dynamic/text/1';
    const Y = 'demo://resource/dynamic/text/2';
    expect(resultOf(await a.call('resources/subscribe', { uri: X }))).toEqual({});
    expect(resultOf(await a.call('resources/subscribe', { uri: Y }))).toEqual({});
    expect(resultOf(await b.call('resources/subscribe', { uri: Y }))).toEqual({});

    // Starting the simulated updates sends one resources/updated per subscribed uri at once.
    await a.call('tools/call', { name: 'toggle-subscriber-updates', arguments: {} });
    await waitFor(() => a.updatedUris().length >= 2 && b.updatedUris().length >= 1 || undefined, 5_000, 'resources/updated: two for a, one for b');
    expect(a.updatedUris().sort()).toEqual([X, Y]);
    expect(b.updatedUris()).toEqual([Y]);

    // a leaves Y: b still holds it, so the upstream subscription (refcount 1) stays.
    expect(resultOf(await a.call('resources/unsubscribe', { uri: Y }))).toEqual({});
    a.notifications.length = 0;
    b.notifications.length = 0;
    await a.call('tools/call', { name: 'toggle-subscriber-updates', arguments: {} }); // stop
    await a.call('tools/call', { name: 'toggle-subscriber-updates', arguments: {} }); // start: immediate updates
    await waitFor(() => a.updatedUris().length >= 1 && b.updatedUris().length >= 1 || undefined, 5_000, 'resources/updated for a and b');
    expect(a.updatedUris()).toEqual([X]);
    expect(b.updatedUris()).toEqual([Y]);
  });

  it('sets the upstream to the most verbose level in use and filters log messages per session', async () => {
    const a = new RecordingClient('a');
    const b = new RecordingClient('b');
    await a.open(bridge);
    await b.open(bridge);
    expect(resultOf(await b.call('logging/setLevel', { level: 'info' }))).toEqual({});
    expect(resultOf(await a.call('logging/setLevel', { level: 'error' }))).toEqual({});

    // server-everything logs each subscribe at level info before answering it.
    await b.call('resources/subscribe', { uri: 'demo://resource/dynamic/text/3' });
    expect(b.messages().some((m) => m.includes('Received Subscribe Resource request for URI: demo://resource/dynamic/text/3'))).toBe(true);
    expect(a.messages()).toEqual([]);

    // What the upstream itself sends (a pool listener sees it raw): at error, no info messages at all.
    const raw: string[] = [];
    const stop = pool.addListener({ notification: (_s, n) => raw.push(JSON.stringify(n)) });
    expect(resultOf(await b.call('logging/setLevel', { level: 'error' }))).toEqual({});
    await b.call('resources/subscribe', { uri: 'demo://resource/dynamic/text/5' });
    expect(raw.filter((m) => m.includes('Received Subscribe'))).toEqual([]);
    expect(resultOf(await a.call('logging/setLevel', { level: 'debug' }))).toEqual({});
    await b.call('resources/subscribe', { uri: 'demo://resource/dynamic/text/6' });
    expect(raw.filter((m) => m.includes('demo://resource/dynamic/text/6'))).toHaveLength(1);
    expect(a.messages().filter((m) => m.includes('demo://resource/dynamic/text/6'))).toHaveLength(1);
    expect(b.messages().filter((m) => m.includes('demo://resource/dynamic/text/6'))).toEqual([]);
    stop();

    const bad = await a.call('logging/setLevel', { level: 'loud' });
    expect('error' in bad && bad.error.code).toBe(-32602);
  });

  it('unsubscribes upstream when the last subscriber on the key closes', async () => {
    const a = new RecordingClient('a');
    const watcher = new RecordingClient('w');
    await a.open(bridge);
    await watcher.open(bridge);
    const Z = 'demo://resource/dynamic/text/4';
    await a.call('resources/subscribe', { uri: Z });
    await a.session.close();
    // The upstream logs the unsubscribe at info; the watcher (no level set) hears everything.
    await waitFor(() => watcher.messages().some((m) => m.includes(`Received Unsubscribe Resource request: ${Z}`)) || undefined, 5_000, 'the server logging the unsubscribe');
    expect(watcher.messages().filter((m) => m.includes('Unsubscribe')).length).toBe(1);
  });

  it('forwards an unsolicited roots/list to the only session on the key', async () => {
    const client = new RecordingClient('a', { roots: { listChanged: true } }, async (method) => {
      if (method !== 'roots/list') throw new Error(`unexpected ${method}`);
      return { roots: [{ uri: 'file:///tmp/project', name: 'project' }] };
    });
    await client.open(bridge);
    // server-everything asks for roots 350 ms after initialized, outside any call.
    await waitFor(() => client.requests.length > 0 || undefined, 5_000, 'the server request reaching the client');
    expect(client.requests[0]).toMatchObject({ method: 'roots/list', via: 'channel' });
    await waitFor(() => client.messages().some((m) => m.includes('1 root(s) received')) || undefined, 5_000, 'the server logging the roots it received');
  });

  it('a client taking a shared child that heard another client’s roots gets get-roots-list with its own roots', async () => {
    const rootsAnswer = (uri: string): Answer => async (method) => (method === 'roots/list' ? { roots: [{ uri, name: uri }] } : {});
    const a = new RecordingClient('a', { roots: { listChanged: true } }, rootsAnswer('file:///a'));
    await a.open(bridge);
    await waitFor(() => a.requests.length > 0 || undefined, 5_000, 'the server request reaching a');
    expect(textOf(await a.call('tools/call', { name: 'get-roots-list', arguments: {} }))).toContain('URI: file:///a');
    const b = new RecordingClient('b', { roots: { listChanged: true } }, rootsAnswer('file:///b'));
    await b.open(bridge);
    expect(link.pids()).toHaveLength(1); // pool max 1: b shares a's child, which cached a's roots
    const text = textOf(await b.call('tools/call', { name: 'get-roots-list', arguments: {} }));
    expect(text).toContain('URI: file:///b');
    expect(text).not.toContain('file:///a');
    expect(b.requests.map((q) => q.method)).toEqual(['roots/list']);
  });

  it('refuses an unsolicited request when several sessions share the key', async () => {
    const answer: Answer = async () => ({ roots: [] });
    const a = new RecordingClient('a', { roots: {} }, answer);
    const b = new RecordingClient('b', { roots: {} }, answer);
    await Promise.all([a.open(bridge), b.open(bridge)]);
    // server-everything asks for roots 350 ms after initialized, outside any call: two clients on the key,
    // so the bridge cannot tell whose it is, answers the server with an error, and asks neither.
    await waitFor(() => logged.some((r) => r.event === 'l2l.unsolicited_request_refused') || undefined, 5_000, 'the log record l2l.unsolicited_request_refused');
    expect(logged.filter((r) => r.event === 'l2l.unsolicited_request_refused')).toEqual([expect.objectContaining({ method: 'roots/list', candidates: 2 })]);
    expect([...a.requests, ...b.requests]).toEqual([]);
  });
});

describe('legacy-to-legacy: which calls hold a pooled child alone', () => {
  let link: LegacyStdioLink;
  let pool: SessionPool;
  let bridge: LegacyToLegacyBridge;

  beforeEach(() => {
    link = new LegacyStdioLink({ command: EVERYTHING_STDIO_COMMAND[0], args: EVERYTHING_STDIO_COMMAND.slice(1), logger: silentLogger, callTimeoutMs: 10_000 });
    pool = new SessionPool(link, { max: 2, eager: 2, idleMs: 60_000, logger: silentLogger });
    bridge = new LegacyToLegacyBridge({ upstream: { kind: 'pooled', pool }, logger: silentLogger, callTimeoutMs: 10_000 });
  });

  afterEach(async () => {
    await bridge.close();
    await pool.close();
    await link.close();
  });

  const slowCall = { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 1 } };

  it('runs concurrent tools/call of a client that declared no capabilities on one shared child', async () => {
    const client = new RecordingClient('a');
    await client.open(bridge);
    const answers = await Promise.all([client.call('tools/call', slowCall), client.call('tools/call', slowCall)]);
    for (const a of answers) expect(textOf(a)).toContain('Long running operation completed');
    expect(link.pids()).toHaveLength(1);
  });

  it('gives each concurrent tools/call of a client that can be asked for input a child of its own', async () => {
    const client = new RecordingClient('a', { elicitation: {} });
    await client.open(bridge);
    const answers = await Promise.all([client.call('tools/call', slowCall), client.call('tools/call', slowCall)]);
    for (const a of answers) expect(textOf(a)).toContain('Long running operation completed');
    expect(link.pids()).toHaveLength(2);
  });
});

describe('legacy-to-legacy with a dedicated upstream session per downstream session', () => {
  let link: LegacyStdioLink;
  let bridge: LegacyToLegacyBridge;

  beforeEach(() => {
    link = new LegacyStdioLink({ command: EVERYTHING_STDIO_COMMAND[0], args: EVERYTHING_STDIO_COMMAND.slice(1), logger: silentLogger, callTimeoutMs: 10_000 });
    bridge = new LegacyToLegacyBridge({ upstream: { kind: 'dedicated', link }, logger: silentLogger, callTimeoutMs: 10_000 });
  });

  afterEach(async () => {
    await bridge.close();
    await link.close();
  });

  it('opens one upstream session per client, relays calls and server requests, and closes it with the client', async () => {
    const a = new RecordingClient('a', { elicitation: {} }, async () => ({ action: 'decline' }));
    const b = new RecordingClient('b');
    await a.open(bridge);
    await b.open(bridge);
    expect(link.pids()).toHaveLength(2);
    expect(textOf(await b.call('tools/call', { name: 'echo', arguments: { message: 'b' } }))).toBe('Echo: b');
    expect(textOf(await a.call('tools/call', { name: 'trigger-elicitation-request', arguments: {} }))).toContain('declined');
    expect(a.requests.map((q) => q.method)).toEqual(['elicitation/create']);
    await a.session.close();
    await waitFor(() => link.pids().length === 1 || undefined, 5_000, 'one child running');
  });

  it('delivers the upstream session unsolicited notifications to its own client', async () => {
    const a = new RecordingClient('a');
    await a.open(bridge);
    await a.call('resources/subscribe', { uri: 'demo://resource/dynamic/text/9' });
    await a.call('tools/call', { name: 'toggle-subscriber-updates', arguments: {} });
    await waitFor(() => a.updatedUris().length >= 1 || undefined, 5_000, 'resources/updated for a');
    expect(a.updatedUris()[0]).toBe('demo://resource/dynamic/text/9');
  });
});
