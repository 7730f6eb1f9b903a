import { describe, expect, it } from 'vitest';
import { acknowledgement, ListenFilter, stampSubscription } from '../../bridges/shared/listen-filter.js';
import { RpcError } from '../../src/errors.js';

const everything = { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { subscribe: true, listChanged: true } };
const all = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true, resourceSubscriptions: ['a://1', 'a://2'] };

describe('ListenFilter.honour (the honoured subset)', () => {
  it.each([
    ['everything asked, everything supported', all, everything, all],
    ['nothing supported', all, {}, {}],
    ['listChanged false is not honoured', all, { tools: { listChanged: false }, resources: { subscribe: true } }, { resourceSubscriptions: ['a://1', 'a://2'] }],
    ['subscriptions need resources.subscribe', all, { resources: { listChanged: true } }, { resourcesListChanged: true }],
    ['flags set false are opt-outs', { toolsListChanged: false, promptsListChanged: true }, everything, { promptsListChanged: true }],
    ['unknown fields (taskIds) are not honoured', { taskIds: ['t'] }, everything, {}],
    ['an empty URI list is left out', { resourceSubscriptions: [] }, everything, {}],
    ['duplicate URIs are folded', { resourceSubscriptions: ['a://1', 'a://1'] }, everything, { resourceSubscriptions: ['a://1'] }],
  ])('%s', (_name, requested, caps, honoured) => {
    expect(ListenFilter.honour(requested, caps).honoured).toEqual(honoured);
  });

  it.each([
    ['a missing filter', undefined, /requires params.notifications/],
    ['a non-boolean flag', { toolsListChanged: 'yes' }, /toolsListChanged must be a boolean/],
    ['non-string URIs', { resourceSubscriptions: [1] }, /resourceSubscriptions must be an array of strings/],
  ])('refuses %s with -32602', (_name, requested, message) => {
    let caught: unknown;
    try {
      ListenFilter.honour(requested, everything);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(RpcError);
    expect((caught as RpcError).code).toBe(-32602);
    expect((caught as RpcError).message).toMatch(message);
  });

  it('listens asking for the same list flags share one frozen filter; a filter with URIs is its own', () => {
    const a = ListenFilter.honour({ toolsListChanged: true, promptsListChanged: true }, everything);
    const b = ListenFilter.honour({ promptsListChanged: true, toolsListChanged: true, taskIds: ['t'] }, everything);
    expect(b).toBe(a);
    expect(Object.isFrozen(a.honoured)).toBe(true);
    expect(Object.keys(a.honoured)).toEqual(['toolsListChanged', 'promptsListChanged']);
    expect(ListenFilter.honour({ toolsListChanged: true }, everything)).not.toBe(a);
    const withUris = ListenFilter.honour({ toolsListChanged: true, resourceSubscriptions: ['a://1'] }, everything);
    expect(withUris).not.toBe(ListenFilter.honour({ toolsListChanged: true, resourceSubscriptions: ['a://1'] }, everything));
    expect(withUris.honoured).toEqual({ toolsListChanged: true, resourceSubscriptions: ['a://1'] });
  });

  it('isEmpty is true only when nothing is honoured; without() drops URIs', () => {
    const f = ListenFilter.honour({ resourceSubscriptions: ['a://1', 'a://2'] }, everything);
    expect(f.isEmpty).toBe(false);
    expect(f.without(['a://1']).uris).toEqual(['a://2']);
    expect(f.without(['a://1', 'a://2']).isEmpty).toBe(true);
    expect(ListenFilter.honour({}, everything).isEmpty).toBe(true);
  });
});

describe('ListenFilter.accepts (which notifications a listen receives)', () => {
  const f = ListenFilter.honour({ toolsListChanged: true, resourceSubscriptions: ['a://1'] }, everything);
  it.each([
    ['notifications/tools/list_changed', undefined, true],
    ['notifications/prompts/list_changed', undefined, false],
    ['notifications/resources/list_changed', undefined, false],
    ['notifications/resources/updated', { uri: 'a://1' }, true],
    ['notifications/resources/updated', { uri: 'a://2' }, false],
    ['notifications/resources/updated', {}, false],
    ['notifications/progress', { progressToken: 1, progress: 1 }, false],
    ['notifications/message', { level: 'info', data: 'x' }, false],
  ])('%s %j → %s', (method, params, expected) => {
    expect(f.accepts({ method, params })).toBe(expected);
  });
});

describe('stamping', () => {
  it('adds the subscriptionId to _meta and keeps other params and _meta keys', () => {
    expect(stampSubscription({ method: 'notifications/resources/updated', params: { uri: 'a://1', _meta: { k: 1 } } }, 'L-1')).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'a://1', _meta: { k: 1, 'io.modelcontextprotocol/subscriptionId': 'L-1' } },
    });
  });

  it('the acknowledgement names the listen id and the honoured subset', () => {
    const f = ListenFilter.honour({ toolsListChanged: true, promptsListChanged: true }, { tools: { listChanged: true } });
    expect(acknowledgement(7, f)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { toolsListChanged: true }, _meta: { 'io.modelcontextprotocol/subscriptionId': 7 } },
    });
  });
});
