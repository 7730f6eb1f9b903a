import { describe, expect, it } from 'vitest';
import { parseServersConfig } from '../../src/config/servers-config.js';

const F = 'cfg.json';
const parse = (value: unknown, env: NodeJS.ProcessEnv = {}) => parseServersConfig(typeof value === 'string' ? value : JSON.stringify(value), F, env);
const servers = (s: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ mcpServers: s, ...extra });

describe('parseServersConfig: the desktop-client format', () => {
  it('reads a real desktop config: stdio entries with command/args/env/cwd, remote ones with url/headers/type', () => {
    const c = parse(
      servers({
        filesystem: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { LOG: 'x' }, cwd: '/tmp' },
        remote: { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
        legacy: { transport: 'sse', url: 'http://127.0.0.1:3000/sse' },
      }),
      { TOKEN: 'abc' },
    );
    expect(c.servers.map((s) => [s.name, s.upstream, s.transport])).toEqual([
      ['filesystem', { kind: 'command', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { LOG: 'x' }, cwd: '/tmp' }, undefined],
      ['remote', { kind: 'url', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer abc' } }, 'streamable-http'],
      ['legacy', { kind: 'url', url: 'http://127.0.0.1:3000/sse', headers: {} }, 'http+sse'],
    ]);
  });

  it('reads the bridge keys per server and the "bridge" object as flags', () => {
    const c = parse(servers({ a: { command: 'x', epoch: 'initialize', pool: 3, callTimeout: 1000, allowTools: ['read_*'], denyTools: ['read_secret'] } }, { bridge: { listen: '127.0.0.1:9000', maxSessions: 10, allowOrigin: ['https://app.example'], debugStats: true, waitForUpstream: true } }));
    expect(c.servers[0]).toMatchObject({ epoch: 'initialize', poolMax: 3, callTimeoutMs: 1000, allowTools: ['read_*'], denyTools: ['read_secret'] });
    expect(c.bridge).toEqual({ listen: '127.0.0.1:9000', maxSessions: '10', allowOrigin: ['https://app.example'], debugStats: true, waitForUpstream: true });
  });

  it('accepts comments and trailing commas (JSONC), skips disabled entries, and $${ writes a literal ${', () => {
    const c = parse('{\n // mine\n "mcpServers": { "a": { "command": "echo", "args": ["$${HOME}"], }, "b": { "command": "y", "disabled": true } } }');
    expect(c.servers.map((s) => s.name)).toEqual(['a']);
    expect(c.servers[0].upstream).toMatchObject({ args: ['${HOME}'] });
  });

  it('the fingerprint changes with the entry and not with key order', () => {
    const a = parse(servers({ s: { command: 'x', args: ['1'], env: { A: '1', B: '2' } } })).servers[0].fingerprint;
    const b = parse(servers({ s: { env: { B: '2', A: '1' }, args: ['1'], command: 'x' } })).servers[0].fingerprint;
    const c = parse(servers({ s: { command: 'x', args: ['2'], env: { A: '1', B: '2' } } })).servers[0].fingerprint;
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });

  const bad: Array<[string, string, RegExp]> = [
    ['unknown server key, with its position', '{"mcpServers": {"a": {"command": "x", "comand": "y"}}}', /^cfg\.json:1:39: unknown key "comand" in mcpServers\.a/],
    ['unknown top-level key', '{"mcpServers": {}, "servers": {}}', /^cfg\.json:1:20: unknown key "servers"/],
    ['unknown bridge key', '{"mcpServers": {}, "bridge": {"port": 1}}', /^cfg\.json:1:31: unknown key "port" in bridge/],
    ['a per-upstream flag in bridge', '{"mcpServers": {}, "bridge": {"upstream": "x"}}', /unknown key "upstream" in bridge/],
    ['a missing variable names it', '{"mcpServers": {"a": {"url": "https://h/${NOPE}"}}}', /^cfg\.json:1:30: mcpServers\.a\.url refers to \$\{NOPE\}, which is not set/],
    ['not JSON', '{"mcpServers": {', /^cfg\.json:1:\d+: not valid JSON/],
    ['no mcpServers', '{}', /no "mcpServers" object/],
    ['a bad name', '{"mcpServers": {"a/b": {"command": "x"}}}', /server name "a\/b" must be/],
    ['a name of dots', '{"mcpServers": {"..": {"command": "x"}}}', /server name "\.\." must be/],
    ['both command and url', '{"mcpServers": {"a": {"command": "x", "url": "http://h/"}}}', /both "command" and "url"/],
    ['neither', '{"mcpServers": {"a": {"args": []}}}', /needs "command" .* or "url"/],
    ['type disagrees with the entry', '{"mcpServers": {"a": {"type": "stdio", "url": "http://h/"}}}', /declares "stdio" but gives "url"/],
    ['unknown type', '{"mcpServers": {"a": {"type": "grpc", "url": "http://h/"}}}', /type must be one of/],
    ['type and transport disagree', '{"mcpServers": {"a": {"type": "sse", "transport": "http", "url": "http://h/"}}}', /disagree/],
    ['args not strings', '{"mcpServers": {"a": {"command": "x", "args": [1]}}}', /mcpServers\.a\.args\[0\] must be a string/],
    ['a relative url', '{"mcpServers": {"a": {"url": "/mcp"}}}', /absolute http/],
    ['a header value with a newline', '{"mcpServers": {"a": {"url": "http://h/", "headers": {"X": "a\\nb"}}}}', /must not contain CR, LF or NUL/],
    ['pool below 1', '{"mcpServers": {"a": {"command": "x", "pool": 0}}}', /pool must be a whole number ≥ 1/],
    ['a bad epoch', '{"mcpServers": {"a": {"command": "x", "epoch": "2025"}}}', /epoch must be auto/],
    ['a key given twice', '{"mcpServers": {"a": {"command": "x", "command": "y"}}}', /key "command" is given twice/],
  ];
  it.each(bad)('refuses %s (BRIDGE_ERR_USAGE, exit 2)', (_what, text, message) => {
    expect(() => parse(text)).toThrow(expect.objectContaining({ code: 'BRIDGE_ERR_USAGE', message: expect.stringMatching(message) }));
  });

  it('counts lines and columns from 1 across newlines', () => {
    expect(() => parse('{\n  "mcpServers": {\n    "a": {\n      "command": "x",\n      "nope": 1\n    }\n  }\n}')).toThrow(/^cfg\.json:5:7: unknown key "nope"/);
  });
});
