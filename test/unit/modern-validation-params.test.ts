import { describe, expect, it } from 'vitest';
import { MODERN_METHODS } from '../../src/faces/modern-methods.js';
import { MODERN_PARAMS, modernParamsProblem } from '../../src/faces/modern-validation-params.js';
import { validateModernMessage } from '../../src/faces/modern-validation.js';
import { paramsPath } from '../../src/faces/params-shape.js';

type Obj = Record<string, unknown>;

/** [method, params, expected field or undefined when the params fit, expected problem] */
type Row = [string, Obj, string | undefined, RegExp?];

const input = { inputResponses: { 'elicit-1': { action: 'accept', content: { name: 'A' } } }, requestState: 's' };

const rows: Row[] = [
  // tools/call: CallToolRequestParams
  ['tools/call', { name: 't' }, undefined],
  ['tools/call', { name: 't', arguments: { a: 1, b: [2], c: null } }, undefined],
  ['tools/call', { name: 't', arguments: {}, ...input }, undefined],
  ['tools/call', { name: 't', arguments: 'hello' }, 'params.arguments', /expected an object, received string/],
  ['tools/call', { name: 't', arguments: [1, 2] }, 'params.arguments', /received array/],
  ['tools/call', { name: 't', arguments: null }, 'params.arguments', /received null/],
  ['tools/call', { arguments: {} }, 'params.name', /missing/],
  ['tools/call', { name: 7 }, 'params.name', /expected a string, received number/],
  ['tools/call', { name: 't', inputResponses: null }, 'params.inputResponses', /expected an object, received null/],
  ['tools/call', { name: 't', inputResponses: { user_name: 12345 } }, 'params.inputResponses.user_name', /expected an object, received number/],
  ['tools/call', { name: 't', inputResponses: {}, requestState: 42 }, 'params.requestState', /expected a string/],
  // prompts/get: arguments is { [key]: string }
  ['prompts/get', { name: 'p', arguments: { a: 'x' } }, undefined],
  ['prompts/get', { name: 'p', arguments: { a: 1 } }, 'params.arguments.a', /expected a string, received number/],
  ['prompts/get', { name: 'p', arguments: 'x' }, 'params.arguments', /expected an object/],
  ['prompts/get', {}, 'params.name', /missing/],
  ['prompts/get', { name: ['p'] }, 'params.name', /received array/],
  ['prompts/get', { name: 'p', inputResponses: 'x' }, 'params.inputResponses', /expected an object/],
  // resources/read
  ['resources/read', { uri: 'test://x' }, undefined],
  ['resources/read', { uri: 'test://x', ...input }, undefined],
  ['resources/read', {}, 'params.uri', /missing/],
  ['resources/read', { uri: { href: 'x' } }, 'params.uri', /expected a string, received object/],
  // */list: cursor
  ['tools/list', {}, undefined],
  ['tools/list', { cursor: 'c' }, undefined],
  ['tools/list', { cursor: 3 }, 'params.cursor', /expected a string/],
  ['prompts/list', { cursor: true }, 'params.cursor', /received boolean/],
  ['resources/list', { cursor: null }, 'params.cursor', /received null/],
  ['resources/templates/list', { cursor: {} }, 'params.cursor', /received object/],
  // server/discover takes only _meta
  ['server/discover', {}, undefined],
  // completion/complete
  ['completion/complete', { ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' } }, undefined],
  ['completion/complete', { ref: { type: 'ref/resource', uri: 'r://{x}' }, argument: { name: 'x', value: 'v' }, context: { arguments: { y: 'z' } } }, undefined],
  ['completion/complete', { argument: { name: 'a', value: '' } }, 'params.ref', /missing/],
  ['completion/complete', { ref: { type: 'ref/other' }, argument: { name: 'a', value: '' } }, 'params.ref.type', /expected one of "ref\/prompt", "ref\/resource", received "ref\/other"/],
  ['completion/complete', { ref: { type: 'ref/prompt' }, argument: { name: 'a', value: '' } }, 'params.ref.name', /missing/],
  ['completion/complete', { ref: { type: 'ref/resource', uri: 1 }, argument: { name: 'a', value: '' } }, 'params.ref.uri', /expected a string/],
  ['completion/complete', { ref: { type: 'ref/prompt', name: 'p' } }, 'params.argument', /missing/],
  ['completion/complete', { ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: 2 } }, 'params.argument.value', /expected a string/],
  ['completion/complete', { ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' }, context: { arguments: { y: 1 } } }, 'params.context.arguments.y', /expected a string/],
  // subscriptions/listen: SubscriptionFilter
  ['subscriptions/listen', { notifications: {} }, undefined],
  ['subscriptions/listen', { notifications: { toolsListChanged: true, resourceSubscriptions: ['a://b'] } }, undefined],
  ['subscriptions/listen', {}, 'params.notifications', /missing/],
  ['subscriptions/listen', { notifications: { toolsListChanged: 'yes' } }, 'params.notifications.toolsListChanged', /expected a boolean/],
  ['subscriptions/listen', { notifications: { resourceSubscriptions: 'a://b' } }, 'params.notifications.resourceSubscriptions', /expected an array/],
  ['subscriptions/listen', { notifications: { resourceSubscriptions: ['a://b', 3] } }, 'params.notifications.resourceSubscriptions.1', /expected a string/],
  // tasks/* are an extension: the upstream judges their params
  ['tasks/get', { taskId: 3 }, undefined],
];

describe('modernParamsProblem (schema/2026-07-28 params shapes)', () => {
  it.each(rows)('%s %j → %s', (method, params, field, problem) => {
    const found = modernParamsProblem(method, { ...params, _meta: {} });
    if (field === undefined) {
      expect(found).toBeUndefined();
      return;
    }
    expect(found && paramsPath(found)).toBe(field);
    expect(found!.problem).toMatch(problem!);
  });

  it('has a rule for every method the face serves', () => {
    const served = Object.entries(MODERN_METHODS).filter(([, e]) => e.status !== 'removed').map(([m]) => m);
    expect(Object.keys(MODERN_PARAMS).sort()).toEqual(served.sort());
  });
});

describe('the ladder refuses bad params with 400 -32602 naming the field', () => {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  it.each([
    ['tools/call', { name: 't', arguments: 'hello' }, 'params.arguments'],
    ['prompts/get', { name: 'p', arguments: { a: 1 } }, 'params.arguments.a'],
    ['resources/read', { uri: 5 }, 'params.uri'],
    ['tools/list', { cursor: 5 }, 'params.cursor'],
  ])('%s %j', (method, params, field) => {
    const verdict = validateModernMessage({ jsonrpc: '2.0', id: 9, method, params: { ...params, _meta: meta } }, undefined);
    expect(verdict).toMatchObject({ ok: false, status: 400, id: 9, error: { code: -32602, data: { field } } });
    if (!verdict.ok) expect(verdict.error.message).toContain(`${method}: ${field}:`);
  });

  it('a tools/call without a name is -32602 naming params.name, before the Mcp-Name header rung', () => {
    const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' };
    const verdict = validateModernMessage({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: {}, _meta: meta } }, headers);
    expect(verdict).toMatchObject({ ok: false, status: 400, error: { code: -32602, data: { field: 'params.name', problem: 'missing' } } });
  });

  it('well-formed params still meet the header rungs (-32020 for a missing Mcp-Name)', () => {
    const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' };
    const verdict = validateModernMessage({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 't', _meta: meta } }, headers);
    expect(verdict).toMatchObject({ ok: false, status: 400, error: { code: -32020 } });
  });

  it('an unknown method is still -32601 (404), not a params error', () => {
    const verdict = validateModernMessage({ jsonrpc: '2.0', id: 1, method: 'nope/x', params: { arguments: 'x', _meta: meta } }, undefined);
    expect(verdict).toMatchObject({ ok: false, status: 404, error: { code: -32601 } });
  });
});
