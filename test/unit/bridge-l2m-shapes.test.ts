import { describe, expect, it } from 'vitest';
import { initializeFromDiscover, SYNTHESIZED_SERVER_INFO } from '../../bridges/legacy-to-modern/initialize-from-discover.js';
import { legacyFailure, toLegacyOutcome } from '../../bridges/legacy-to-modern/legacy-results.js';
import { withoutSubscriptionId } from '../../bridges/legacy-to-modern/listen-keeper.js';
import { SessionState } from '../../bridges/legacy-to-modern/session-state.js';
import type { UpstreamFacts } from '../../src/contracts/upstream.js';

const discover = {
  resultType: 'complete',
  supportedVersions: ['2026-07-28'],
  capabilities: { tools: { listChanged: true }, resources: { subscribe: true }, extensions: { 'x.y/z': {} } },
  instructions: 'be nice',
  ttlMs: 0,
  cacheScope: 'private',
  _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'srv', version: '2.0.0' } },
};
const facts = { discover, capabilities: {} } as unknown as Pick<UpstreamFacts, 'discover' | 'capabilities' | 'serverInfo' | 'instructions'>;

describe('initializeFromDiscover', () => {
  const versions: [unknown, string][] = [
    ['2024-11-05', '2024-11-05'],
    ['2025-03-26', '2025-03-26'],
    ['2025-06-18', '2025-06-18'],
    ['2025-11-25', '2025-11-25'],
    ['2026-07-28', '2025-11-25'],
    ['1999-01-01', '2025-11-25'],
    [undefined, '2025-11-25'],
  ];
  for (const [requested, answered] of versions) {
    it(`answers ${String(requested)} with ${answered}`, () => {
      expect(initializeFromDiscover(facts, requested).protocolVersion).toBe(answered);
    });
  }

  it('takes serverInfo from the result _meta, capabilities minus extensions, and instructions', () => {
    expect(initializeFromDiscover(facts, '2025-06-18')).toEqual({
      protocolVersion: '2025-06-18',
      capabilities: { tools: { listChanged: true }, resources: { subscribe: true } },
      serverInfo: { name: 'srv', version: '2.0.0' },
      instructions: 'be nice',
    });
  });

  it('synthesizes serverInfo when the server names none, and omits absent instructions', () => {
    const bare = { discover: { capabilities: {} }, capabilities: {} } as unknown as typeof facts;
    const result = initializeFromDiscover(bare, '2025-11-25');
    expect(result.serverInfo).toEqual(SYNTHESIZED_SERVER_INFO);
    expect(result).not.toHaveProperty('instructions');
  });

  it('falls back on the facts when there is no discover result', () => {
    const f = { capabilities: { prompts: {} }, serverInfo: { name: 'f', version: '1' }, instructions: 'i' } as unknown as typeof facts;
    expect(initializeFromDiscover(f, '2025-03-26')).toEqual({ protocolVersion: '2025-03-26', capabilities: { prompts: {} }, serverInfo: { name: 'f', version: '1' }, instructions: 'i' });
  });
});

describe('toLegacyOutcome', () => {
  it('strips resultType, ttlMs and cacheScope from a complete result and keeps the rest', () => {
    expect(toLegacyOutcome('tools/list', { result: { resultType: 'complete', ttlMs: 0, cacheScope: 'private', tools: [], _meta: { a: 1 } } })).toEqual({ result: { tools: [], _meta: { a: 1 } } });
  });

  it('treats a missing resultType as complete', () => {
    expect(toLegacyOutcome('prompts/list', { result: { prompts: [] } })).toEqual({ result: { prompts: [] } });
  });

  it('refuses any other resultType with -32603', () => {
    const out = toLegacyOutcome('tools/call', { result: { resultType: 'task', task: {} } });
    expect(out).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/resultType "task"/) } });
  });

  it('-32021 on tools/call becomes an isError result', () => {
    const out = toLegacyOutcome('tools/call', { error: { code: -32021, message: 'Missing capability', data: { requiredCapabilities: { sampling: {} } } } });
    expect(out).toEqual({ result: { content: [{ type: 'text', text: 'upstream refused tools/call: Missing capability (-32021)' }], isError: true } });
  });

  const rewritten: [string, number][] = [
    ['prompts/get', -32021],
    ['tools/call', -32020],
    ['tools/list', -32022],
  ];
  for (const [method, code] of rewritten) {
    it(`${code} on ${method} becomes -32603 with the message and the original in data`, () => {
      const error = { code, message: 'nope' };
      expect(toLegacyOutcome(method, { error })).toEqual({ error: { code: -32603, message: `upstream refused ${method}: nope (${code})`, data: { upstreamError: error } } });
    });
  }

  it('passes other errors through untouched', () => {
    const error = { code: -32602, message: 'Resource not found', data: { uri: 'x' } };
    expect(toLegacyOutcome('resources/read', { error })).toEqual({ error });
  });

  it('legacyFailure is an isError result for tools/call and -32603 otherwise', () => {
    expect(legacyFailure('tools/call', 'why')).toEqual({ result: { content: [{ type: 'text', text: 'why' }], isError: true } });
    expect(legacyFailure('resources/read', 'why')).toEqual({ error: { code: -32603, message: 'why' } });
  });
});

describe('SessionState', () => {
  const identity = { protocolVersion: '2025-06-18', clientInfo: { name: 'c', version: '1' }, clientCapabilities: { roots: { listChanged: true }, elicitation: {} } };

  it('stamps the 2026 envelope over the client params, keeping its own _meta keys', () => {
    const s = new SessionState(identity);
    expect(s.stamp({ name: 'echo', _meta: { progressToken: 7, 'io.modelcontextprotocol/protocolVersion': 'x' } })).toEqual({
      name: 'echo',
      _meta: {
        progressToken: 7,
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': { roots: {}, elicitation: {} },
      },
    });
  });

  it('adds logLevel once it is set, and gives params to a request without any', () => {
    const s = new SessionState(identity);
    s.logLevel = 'warning';
    expect(s.stamp(undefined)._meta).toMatchObject({ 'io.modelcontextprotocol/logLevel': 'warning' });
  });

  it('drops a 2025-11-25 task augmentation', () => {
    expect(new SessionState(identity).stamp({ name: 't', task: { ttl: 1000 } })).not.toHaveProperty('task');
  });

  it('hands out a copy of the capabilities each time', () => {
    const s = new SessionState(identity);
    const a = s.envelope()['io.modelcontextprotocol/clientCapabilities'] as Record<string, unknown>;
    a.sampling = {};
    expect(s.envelope()['io.modelcontextprotocol/clientCapabilities']).toEqual({ roots: {}, elicitation: {} });
  });
});

describe('withoutSubscriptionId', () => {
  it('drops the subscriptionId and an _meta left empty', () => {
    const n = { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'u', _meta: { 'io.modelcontextprotocol/subscriptionId': 'l1' } } } as const;
    expect(withoutSubscriptionId(n as never)).toEqual({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'u' } });
  });
  it('keeps other _meta keys', () => {
    const n = { jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 1, other: true } } } as const;
    expect(withoutSubscriptionId(n as never)).toEqual({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { other: true } } });
  });
});
