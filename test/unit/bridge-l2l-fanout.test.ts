import type { JSONRPCNotification } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { McpLogLevel } from '../../bridges/legacy-to-legacy/log-levels.js';
import { fanoutTargets, type FanoutCandidate } from '../../bridges/legacy-to-legacy/notification-fanout.js';

interface C extends FanoutCandidate {
  name: string;
}

function candidate(name: string, level: McpLogLevel | undefined, uris: string[] = []): C {
  return { name, level, subscribed: (uri) => uris.includes(uri) };
}

const a = candidate('a', undefined, ['file:///x']);
const b = candidate('b', 'error', ['file:///y']);
const c = candidate('c', 'info', ['file:///x', 'file:///y']);
const all = [a, b, c];

function n(method: string, params?: Record<string, unknown>): JSONRPCNotification {
  return (params ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', method }) as JSONRPCNotification;
}

describe('fanoutTargets: which sessions sharing an upstream get an unsolicited notification', () => {
  const cases: Array<[string, JSONRPCNotification, C[], string[]]> = [
    ['tools/list_changed → everyone', n('notifications/tools/list_changed'), all, ['a', 'b', 'c']],
    ['prompts/list_changed → everyone', n('notifications/prompts/list_changed'), all, ['a', 'b', 'c']],
    ['resources/list_changed → everyone', n('notifications/resources/list_changed'), all, ['a', 'b', 'c']],
    ['resources/updated → subscribers of x', n('notifications/resources/updated', { uri: 'file:///x' }), all, ['a', 'c']],
    ['resources/updated → subscribers of y', n('notifications/resources/updated', { uri: 'file:///y' }), all, ['b', 'c']],
    ['resources/updated → nobody for an unsubscribed uri', n('notifications/resources/updated', { uri: 'file:///z' }), all, []],
    ['resources/updated without uri → nobody', n('notifications/resources/updated'), all, []],
    ['message debug → sessions without level only', n('notifications/message', { level: 'debug', data: 'd' }), all, ['a']],
    ['message info → a and c', n('notifications/message', { level: 'info', data: 'i' }), all, ['a', 'c']],
    ['message error → everyone', n('notifications/message', { level: 'error', data: 'e' }), all, ['a', 'b', 'c']],
    ['message warning → not b', n('notifications/message', { level: 'warning', data: 'w' }), all, ['a', 'c']],
    ['server cancelled → never', n('notifications/cancelled', { requestId: 3 }), [a], []],
    ['other notification, one session → that session', n('notifications/elicitation/complete', { elicitationId: 'e' }), [b], ['b']],
    ['other notification, several sessions → nobody', n('notifications/elicitation/complete', { elicitationId: 'e' }), all, []],
    ['list_changed, no sessions → nobody', n('notifications/tools/list_changed'), [], []],
  ];
  it.each(cases)('%s', (_name, notification, candidates, expected) => {
    expect(fanoutTargets(notification, candidates).map((t) => t.name)).toEqual(expected);
  });
});
