import { describe, expect, it } from 'vitest';
import { notFoundUri } from '../../bridges/modern-to-legacy/resource-not-found.js';
import { shapeError } from '../../bridges/modern-to-legacy/result-shaping.js';

const U = 'test://nonexistent-resource-for-conformance-testing';

describe('notFoundUri: which legacy errors say the requested resource is absent', () => {
  it.each([
    ['-32002 on resources/read', { code: -32002, message: 'Resource not found' }, 'resources/read', { uri: U }, U],
    ['SDK v1 McpServer: -32602 "Resource <uri> not found"', { code: -32602, message: `MCP error -32602: Resource ${U} not found` }, 'resources/read', { uri: U }, U],
    ['-32602 naming the URI as WHATWG URL serialises it', { code: -32602, message: 'Resource http://h/a%20b not found' }, 'resources/read', { uri: 'http://h/a b' }, 'http://h/a b'],
    ['"Unknown resource" wording', { code: -32602, message: `Unknown resource: ${U}` }, 'resources/read', { uri: U }, U],
    ['-32602 about another URI', { code: -32602, message: 'Resource test://other not found' }, 'resources/read', { uri: U }, undefined],
    ['-32602 naming the URI but not absence', { code: -32602, message: `Invalid URI: ${U} has no host` }, 'resources/read', { uri: U }, undefined],
    ['-32602 not found of a tool', { code: -32602, message: `Tool ${U} not found` }, 'tools/call', { name: U, uri: U }, undefined],
    ['-32603 from a handler that threw', { code: -32603, message: `Unknown resource: ${U}` }, 'resources/read', { uri: U }, undefined],
    ['"Resource not found: <uri>"', { code: -32602, message: `Resource not found: ${U}.` }, 'resources/read', { uri: U }, U],
    ['"<uri> does not exist" in quotes', { code: -32602, message: `'${U}' does not exist` }, 'resources/read', { uri: U }, U],
    ['another resource is the absent one', { code: -32602, message: `Resource ${U} links to test://b, which was not found` }, 'resources/read', { uri: U }, undefined],
    ['a longer URI is the unknown one', { code: -32602, message: `Unknown resource: ${U}/child` }, 'resources/read', { uri: U }, undefined],
    ['the URI is the tail of a longer one', { code: -32602, message: `Resource x${U} not found` }, 'resources/read', { uri: U }, undefined],
    ['no uri in the request', { code: -32602, message: 'Resource x not found' }, 'resources/read', {}, undefined],
  ])('%s', (_name, err, method, params, uri) => {
    expect(notFoundUri(err, method, params)).toBe(uri);
  });
});

describe('shapeError adds data.uri only to a not-found', () => {
  it('SDK v1 not-found gets data.uri, message kept', () => {
    const err = { code: -32602, message: `Resource ${U} not found` };
    expect(shapeError(err, { method: 'resources/read', params: { uri: U } })).toEqual({ ...err, data: { uri: U } });
  });
  it('a -32602 that is not a not-found passes unchanged', () => {
    const err = { code: -32602, message: 'Invalid arguments for tool t' };
    expect(shapeError(err, { method: 'resources/read', params: { uri: U } })).toBe(err);
  });
  it('server data is kept and its uri wins', () => {
    const err = { code: -32602, message: `Resource ${U} not found`, data: { uri: 'x://server', hint: 1 } };
    expect(shapeError(err, { method: 'resources/read', params: { uri: U } })).toEqual(err);
  });
  it('-32002 outside resources/read still becomes -32602', () => {
    expect(shapeError({ code: -32002, message: 'gone' }, { method: 'tools/call', params: {} })).toEqual({ code: -32602, message: 'gone' });
  });
});
