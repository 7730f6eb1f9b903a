import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { optionsFromConfig } from '../../src/config/load-servers-config.js';
import { asKeys } from '../../src/config/server-oauth.js';
import { parseServersConfig } from '../../src/config/servers-config.js';
import { optionsFor } from '../../src/daemon/start-servers.js';

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
    ['a bad url, its credentials masked in the message', '{"mcpServers": {"a": {"url": "ftp://alice:s3cret@h/"}}}', /absolute http.*\(got 'ftp:\/\/\[redacted\]@h\/'\)$/],
    ['a header value with a newline', '{"mcpServers": {"a": {"url": "http://h/", "headers": {"X": "a\\nb"}}}}', /must not contain CR, LF or NUL/],
    ['pool below 1', '{"mcpServers": {"a": {"command": "x", "pool": 0}}}', /pool must be a whole number ≥ 1/],
    ['a bad epoch', '{"mcpServers": {"a": {"command": "x", "epoch": "2025"}}}', /epoch must be auto/],
    ['a key given twice', '{"mcpServers": {"a": {"command": "x", "command": "y"}}}', /key "command" is given twice/],
    ['an unknown oauth key, with its position', '{"mcpServers": {"a": {"url": "http://h/", "oauth": {"client_id": "x"}}}}', /^cfg\.json:1:53: unknown key "client_id" in mcpServers\.a\.oauth \(known: clientId/],
    ['oauth neither an object nor a boolean', '{"mcpServers": {"a": {"url": "http://h/", "oauth": "yes"}}}', /^cfg\.json:1:52: mcpServers\.a\.oauth \(or true \/ false\) must be an object/],
    ['a mistyped oauth value', '{"mcpServers": {"a": {"url": "http://h/", "oauth": {"noBrowser": "yes"}}}}', /^cfg\.json:1:66: mcpServers\.a\.oauth\.noBrowser must be true or false/],
    ['a callback port that is no port', '{"mcpServers": {"a": {"url": "http://h/", "oauth": {"callbackPort": 70000}}}}', /mcpServers\.a\.oauth: "callbackPort" must be a port number/],
    ['a secret without a client id, told in the file\'s keys', '{"mcpServers": {"a": {"url": "http://h/", "oauth": {"clientSecret": "s"}}}}', /mcpServers\.a\.oauth: "clientSecret" belongs to a pre-registered client: add "clientId"/],
    ['client credentials without a secret', '{"mcpServers": {"a": {"url": "http://h/", "oauth": {"grant": "client_credentials", "clientId": "c"}}}}', /"grant" client_credentials needs "clientId" and either "clientSecret" .*or "privateKey"/],
    ['a bad grant', '{"mcpServers": {"a": {"url": "http://h/", "oauth": {"grant": "password"}}}}', /"grant" must be authorization_code or client_credentials/],
    ['oauth on a command server', '{"mcpServers": {"a": {"command": "x", "oauth": {}}}}', /"oauth" applies to a "url" server/],
    ['oauth beside a static Authorization header', '{"mcpServers": {"a": {"url": "http://h/", "headers": {"Authorization": "Bearer t"}, "oauth": {"scope": "x"}}}}', /headers\.Authorization and "oauth": both say how to authorize/],
    ['a per-server oauth key in bridge', '{"mcpServers": {}, "bridge": {"oauthClientId": "x"}}', /unknown key "oauthClientId" in bridge/],
  ];
  it.each(bad)('refuses %s (BRIDGE_ERR_USAGE, exit 2)', (_what, text, message) => {
    expect(() => parse(text)).toThrow(expect.objectContaining({ code: 'BRIDGE_ERR_USAGE', message: expect.stringMatching(message) }));
  });

  it('reads "oauth" as the --oauth-* flags it stands for: ${ENV} in the secret, scopes as a list, a private key relative to the file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'servers-oauth-unit-'));
    writeFileSync(path.join(dir, 'key.pem'), '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n-----END PRIVATE KEY-----\n');
    const c = parseServersConfig(
      JSON.stringify(servers({
        a: { url: 'https://a.example/mcp', oauth: { clientId: 'cid', clientSecret: '${A_SECRET}', scope: ['read', 'write'], callbackPort: 9123, grant: 'client_credentials', noBrowser: true, timeout: '5000' } },
        b: { url: 'https://b.example/mcp', oauth: { clientId: 'kid', privateKey: 'key.pem' } },
        c: { url: 'https://c.example/mcp', oauth: false },
        d: { url: 'https://d.example/mcp', oauth: true },
      })),
      path.join(dir, 'cfg.json'),
      { A_SECRET: 's3cret' },
    );
    expect(c.servers.map((s) => s.oauth)).toEqual([
      { oauthClientId: 'cid', oauthClientSecret: 's3cret', oauthScope: 'read write', oauthCallbackPort: '9123', oauthGrant: 'client_credentials', oauthNoBrowser: true, oauthTimeout: '5000' },
      { oauthClientId: 'kid', oauthPrivateKey: path.join(dir, 'key.pem') },
      false,
      {},
    ]);
    // A changed secret is a changed entry (its unit restarts on SIGHUP).
    const again = parseServersConfig(JSON.stringify(servers({ a: { url: 'https://a.example/mcp', oauth: { clientId: 'cid', clientSecret: 'other' } } })), 'x.json', {});
    const first = parseServersConfig(JSON.stringify(servers({ a: { url: 'https://a.example/mcp', oauth: { clientId: 'cid', clientSecret: 's3cret' } } })), 'x.json', {});
    expect(again.servers[0].fingerprint).not.toBe(first.servers[0].fingerprint);
  });

  it('asKeys tells a flag message in the file\'s keys', () => {
    expect(asKeys('--oauth-grant client_credentials needs --oauth-client-id and either --oauth-client-secret (or MCP_BRIDGE_OAUTH_CLIENT_SECRET) or --oauth-private-key <pem file>')).toBe(
      '"grant" client_credentials needs "clientId" and either "clientSecret" or "privateKey"',
    );
    expect(asKeys('--oauth-callback-port must be a port number 1-65535')).toBe('"callbackPort" must be a port number 1-65535');
  });

  it('counts lines and columns from 1 across newlines', () => {
    expect(() => parse('{\n  "mcpServers": {\n    "a": {\n      "command": "x",\n      "nope": 1\n    }\n  }\n}')).toThrow(/^cfg\.json:5:7: unknown key "nope"/);
  });
});

describe('optionsFromConfig and optionsFor: OAuth per server, the daemon\'s directory', () => {
  const cfg = (s: Record<string, unknown>, bridge: Record<string, unknown> = {}) => parseServersConfig(JSON.stringify({ mcpServers: s, bridge }), 'cfg.json', {});

  it('each URL server gets its own settings over the daemon\'s oauthDir / oauthNoBrowser / oauthTimeout; off for a command, "oauth": false, or a static Authorization', () => {
    const config = cfg(
      {
        cc: { url: 'https://a.example/mcp', oauth: { clientId: 'c', clientSecret: 's', grant: 'client_credentials', timeout: 99 } },
        plain: { url: 'https://b.example/mcp' },
        off: { url: 'https://c.example/mcp', oauth: false },
        header: { url: 'https://d.example/mcp', headers: { Authorization: 'Bearer x' } },
        child: { command: 'x' },
      },
      { oauthDir: '/tmp/servers-oauth-dir', oauthNoBrowser: true },
    );
    // The single upstream's secret variable does not leak into a config server.
    const { options, secrets } = optionsFromConfig(config, {}, [], { MCP_BRIDGE_OAUTH_CLIENT_SECRET: 'from-env' });
    const oauth = Object.fromEntries(config.servers.map((e) => [e.name, optionsFor(e, options, 'cfg.json').oauth]));
    expect(oauth.cc).toMatchObject({ dir: '/tmp/servers-oauth-dir', clientId: 'c', clientSecret: 's', grant: 'client_credentials', noBrowser: true, timeoutMs: 99, commandTarget: '--config cfg.json --server cc' });
    expect(oauth.plain).toMatchObject({ dir: '/tmp/servers-oauth-dir', grant: 'authorization_code', noBrowser: true, timeoutMs: 300_000 });
    expect(oauth.plain?.clientSecret).toBeUndefined();
    expect([oauth.off, oauth.header, oauth.child]).toEqual([undefined, undefined, undefined]);
    expect(secrets).toContain('s');
  });

  it('reads the ops keys of "bridge": metrics, metricsListen, corsOrigin, logFormat', () => {
    const on = optionsFromConfig(cfg({}, { metricsListen: '127.0.0.1:9464', corsOrigin: ['https://app.example'], logFormat: 'pretty' }), {}, [], {}).options;
    expect([on.metrics, on.metricsListen, on.corsOrigins]).toEqual([true, { host: '127.0.0.1', port: 9464 }, ['https://app.example']]);
    expect(optionsFromConfig(cfg({}, { metrics: false }), {}, [], {}).options.metrics).toBe(false);
    expect(() => optionsFromConfig(cfg({}, { metrics: false, metricsListen: '127.0.0.1:1' }), {}, [], {})).toThrow(/--metrics-listen serves the metrics that --no-metrics turns off/);
  });

  it('refuses per-server --oauth-* flags on the command line, and "oauth" with "auth": "pass-through"', () => {
    const config = cfg({ a: { url: 'https://a.example/mcp' } });
    expect(() => optionsFromConfig(config, { oauthClientId: 'x' }, [], {})).toThrow(/with --config, give --oauth-client-id per server as "oauth": \{"clientId": …\}/);
    const pass = cfg({ a: { url: 'https://a.example/mcp', oauth: { scope: 'x' } } }, { auth: 'pass-through' });
    expect(() => optionsFromConfig(pass, {}, [], {})).toThrow(/mcpServers\.a\.oauth: "auth": "pass-through" sends each client's own token upstream/);
  });
});
