import { describe, expect, it } from 'vitest';
import { isHostAllowed, isLoopbackHost, parseHostHeader } from '../../src/faces/host-check.js';

describe('parseHostHeader', () => {
  it.each([
    ['localhost', { hostname: 'localhost' }],
    ['LocalHost:8808', { hostname: 'localhost', port: '8808' }],
    ['127.0.0.1:1', { hostname: '127.0.0.1', port: '1' }],
    ['[::1]:8080', { hostname: '::1', port: '8080' }],
    ['example.com.', { hostname: 'example.com' }],
    ['', undefined],
    ['a b', undefined],
    ['::1', undefined],
    ['host:port', undefined],
    ['[::1', undefined],
    ['host:123456', undefined],
  ] as const)('%j', (raw, want) => {
    expect(parseHostHeader(raw)).toEqual(want);
  });
});

describe('isLoopbackHost (the listen check)', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.5', false],
    ['my-host', false],
    ['localhost.evil.example', false],
    ['128.0.0.1', false],
  ] as const)('%j → %s', (host, want) => {
    expect(isLoopbackHost(host)).toBe(want);
  });
});

describe('isHostAllowed (DNS rebinding)', () => {
  it.each([
    ['absent (HTTP/1.0)', undefined, [], undefined, true],
    ['localhost with a port', 'localhost:8808', [], undefined, true],
    ['an IPv4 literal', '127.0.0.1:8808', [], undefined, true],
    ['a LAN IPv4 literal', '192.168.1.5:8808', [], undefined, true],
    ['an IPv6 literal', '[::1]:8808', [], undefined, true],
    ['a rebinding name', 'attacker.example:8808', [], undefined, false],
    ['a name ending in localhost', 'localhost.attacker.example', [], undefined, false],
    ['a subdomain of localhost', 'a.localhost', [], undefined, false],
    ['the listen host name', 'bridge.lan:8808', [], 'bridge.lan', true],
    ['an --allow-host name, any port', 'mcp.example.com:443', ['mcp.example.com'], undefined, true],
    ['an --allow-host name, case-insensitive', 'MCP.Example.COM', ['mcp.example.com'], undefined, true],
    ['an --allow-host name:port, same port', 'mcp.example.com:8443', ['mcp.example.com:8443'], undefined, true],
    ['an --allow-host name:port, other port', 'mcp.example.com:9999', ['mcp.example.com:8443'], undefined, false],
    ['* allows any name', 'whatever.example', ['*'], undefined, true],
    ['a malformed value', 'a b', ['*'], undefined, false],
    ['an empty value', '', [], undefined, false],
  ] as const)('%s', (_name, host, allow, listen, want) => {
    expect(isHostAllowed(host, [...allow], listen)).toBe(want);
  });
});
