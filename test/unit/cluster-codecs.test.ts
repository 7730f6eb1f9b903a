import { describe, expect, it } from 'vitest';
import { RequestStateCodec } from '../../bridges/shared/request-state.js';
import { ClusterKeys } from '../../src/cluster/cluster-keys.js';
import { mintOwnedId, ownerOfId } from '../../src/cluster/owner-id.js';
import { normalizePeerUrl } from '../../src/cluster/peer-set.js';
import { clusterFrom } from '../../src/daemon/cluster-from-flags.js';

const SECRET = 'unit-cluster-secret-0123456789abcdef-0123';

describe('ClusterKeys', () => {
  const keys = new ClusterKeys(SECRET);

  it('refuses a secret shorter than 32 bytes', () => {
    expect(() => new ClusterKeys('x'.repeat(31))).toThrow(/at least 32 bytes/);
  });

  it('derives the same keys and tags from the same secret on every replica, different ones from another secret', () => {
    const again = new ClusterKeys(SECRET);
    const other = new ClusterKeys(`${SECRET}!`);
    expect(again.requestStateKey.equals(keys.requestStateKey)).toBe(true);
    expect(again.tagOf('http://10.0.0.5:8808')).toBe(keys.tagOf('http://10.0.0.5:8808'));
    expect(other.tagOf('http://10.0.0.5:8808')).not.toBe(keys.tagOf('http://10.0.0.5:8808'));
    expect(keys.tagOf('http://10.0.0.5:8808')).toMatch(/^[0-9a-f]{12}$/);
    expect(keys.tagOf('http://10.0.0.6:8808')).not.toBe(keys.tagOf('http://10.0.0.5:8808'));
  });

  it('verifies its own proof for the same method and URL only, within a minute', () => {
    const now = 1_800_000_000_000;
    const proof = keys.sign('POST', '/.cluster/mcp', now);
    const cases: Array<[string | undefined, string, string, number, boolean]> = [
      [proof, 'POST', '/.cluster/mcp', now, true],
      [proof, 'post', '/.cluster/mcp', now + 59_000, true],
      [proof, 'GET', '/.cluster/mcp', now, false],
      [proof, 'POST', '/.cluster/messages?sessionId=x', now, false],
      [proof, 'POST', '/.cluster/mcp', now + 61_000, false],
      [proof, 'POST', '/.cluster/mcp', now - 61_000, false],
      [new ClusterKeys(`${SECRET}!`).sign('POST', '/.cluster/mcp', now), 'POST', '/.cluster/mcp', now, false],
      [`${now}.${'A'.repeat(43)}`, 'POST', '/.cluster/mcp', now, false],
      [`${now}.short`, 'POST', '/.cluster/mcp', now, false],
      ['no-dot', 'POST', '/.cluster/mcp', now, false],
      ['.abc', 'POST', '/.cluster/mcp', now, false],
      [undefined, 'POST', '/.cluster/mcp', now, false],
    ];
    for (const [value, method, url, at, ok] of cases) expect(keys.verify(value, method, url, at), `${value} ${method} ${url}`).toBe(ok);
  });
});

describe('owner ids', () => {
  it('name their owner and keep 256 random bits', () => {
    const id = mintOwnedId('0123456789ab');
    expect(id).toMatch(/^0123456789ab\.[0-9a-f]{64}$/);
    expect(ownerOfId(id)).toBe('0123456789ab');
    expect(mintOwnedId('0123456789ab')).not.toBe(id);
  });

  it('name no owner for any other shape (a standalone bridge’s ids, garbage)', () => {
    for (const id of ['a'.repeat(64), '0123456789ab', '0123456789ab.xyz', 'ZZZZZZZZZZZZ.' + 'a'.repeat(64), '']) expect(ownerOfId(id)).toBeUndefined();
  });
});

describe('RequestStateCodec.issuer', () => {
  const key = new ClusterKeys(SECRET).requestStateKey;
  const a = new RequestStateCodec({ key, ttlMs: 60_000, instanceId: 'aaaaaaaaaaaa' });
  const b = new RequestStateCodec({ key, ttlMs: 60_000, instanceId: 'bbbbbbbbbbbb' });

  it('reads the owner of a state another replica sealed with the shared key', () => {
    const state = a.seal('ref-1', 'tools/call', { name: 'x' });
    expect(b.issuer(state)).toBe('aaaaaaaaaaaa');
    expect(b.open(state, 'tools/call', { name: 'x' })).toMatchObject({ ok: false, reason: 'foreign' });
    expect(a.open(state, 'tools/call', { name: 'x' })).toMatchObject({ ok: true, ref: 'ref-1' });
  });

  it('names nobody for a tampered, foreign-keyed or malformed state', () => {
    const state = a.seal('ref-1', 'tools/call', {});
    const [p, body, mac] = state.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), i: 'cccccccccccc' })).toString('base64url');
    const otherKey = new RequestStateCodec({ key: 'k'.repeat(32), ttlMs: 60_000, instanceId: 'aaaaaaaaaaaa' }).seal('r', 'tools/call', {});
    for (const s of [`${p}.${forged}.${mac}`, otherKey, 'mb1.x.y', 'nope', 42, undefined]) expect(b.issuer(s)).toBeUndefined();
  });
});

describe('cluster flags', () => {
  const env = {};
  const ok = { clusterSelf: 'http://10.0.0.5:8808/', clusterPeers: 'http://10.0.0.5:8808, http://10.0.0.6:8808', clusterSecret: SECRET };

  it('none: no cluster', () => {
    expect(clusterFrom({}, env, { stdio: false })).toBeUndefined();
  });

  it('a whole set: base URLs normalized, the secret from the flag or the environment, the default handoff', () => {
    expect(clusterFrom(ok, env, { stdio: false })).toEqual({ self: 'http://10.0.0.5:8808', peers: ['http://10.0.0.5:8808', 'http://10.0.0.6:8808'], secret: SECRET, handoffMs: 5_000 });
    expect(clusterFrom({ clusterSelf: 'http://10.0.0.5:8808', clusterDns: 'peers.default.svc', clusterHandoff: '0' }, { MCP_BRIDGE_CLUSTER_SECRET: SECRET }, { stdio: false })).toEqual({ self: 'http://10.0.0.5:8808', dns: 'peers.default.svc', secret: SECRET, handoffMs: 0 });
  });

  it('refuses incomplete or conflicting sets with a message that says what to do', () => {
    const cases: Array<[Parameters<typeof clusterFrom>[0], { stdio: boolean; requestStateKey?: string }, RegExp]> = [
      [{ clusterPeers: ok.clusterPeers, clusterSecret: SECRET }, { stdio: false }, /need --cluster-self/],
      [{ clusterSelf: ok.clusterSelf, clusterSecret: SECRET }, { stdio: false }, /exactly one of --cluster-peers .* or --cluster-dns/],
      [{ ...ok, clusterDns: 'x' }, { stdio: false }, /exactly one of/],
      [{ ...ok, clusterSecret: 'short' }, { stdio: false }, /at least 32 bytes/],
      [{ clusterSelf: ok.clusterSelf, clusterPeers: ok.clusterPeers }, { stdio: false }, /--cluster-secret \(or MCP_BRIDGE_CLUSTER_SECRET\)/],
      [ok, { stdio: true }, /with --stdio/],
      [ok, { stdio: false, requestStateKey: 'k'.repeat(32) }, /leave --request-state-key out/],
      [{ ...ok, clusterSelf: 'ftp://x' }, { stdio: false }, /--cluster-self must be an http\(s\) base URL/],
      [{ ...ok, clusterPeers: 'not a url' }, { stdio: false }, /--cluster-peers must be an http\(s\) base URL/],
      [{ ...ok, clusterPeers: ' , ' }, { stdio: false }, /at least one base URL/],
      [{ clusterSelf: ok.clusterSelf, clusterDns: 'bad name!', clusterSecret: SECRET }, { stdio: false }, /--cluster-dns must be a DNS name/],
      [{ ...ok, clusterHandoff: '-1' }, { stdio: false }, /--cluster-handoff must be a whole number/],
    ];
    for (const [flags, ctx, message] of cases) expect(() => clusterFrom(flags, env, ctx), JSON.stringify(flags)).toThrow(message);
  });

  it('peer URLs compare by origin', () => {
    expect(normalizePeerUrl('http://10.0.0.5:8808/mcp')).toBe('http://10.0.0.5:8808');
    expect(normalizePeerUrl('HTTPS://Bridge-0.peers:443/')).toBe('https://bridge-0.peers');
  });
});

describe('configFromFlags with --cluster-*', () => {
  it('puts the cluster in the options and keeps its secret out of every log line', async () => {
    const { configFromFlags } = await import('../../src/daemon/config-from-flags.js');
    const opts = configFromFlags({ clusterSelf: 'http://127.0.0.1:9001', clusterPeers: 'http://127.0.0.1:9001,http://127.0.0.1:9002', logLevel: 'debug' }, ['node', 'server.js'], { MCP_BRIDGE_CLUSTER_SECRET: SECRET });
    expect(opts.cluster).toEqual({ self: 'http://127.0.0.1:9001', peers: ['http://127.0.0.1:9001', 'http://127.0.0.1:9002'], secret: SECRET, handoffMs: 5_000 });
    expect(opts.requestStateKey).toBeUndefined();
    expect(configFromFlags({}, ['node', 'server.js'], {}).cluster).toBeUndefined();
    // The daemon's logger redacts the secret wherever a field carries it.
    const daemonLines: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => (daemonLines.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      opts.logger.warn('y', { oops: SECRET });
    } finally {
      process.stderr.write = write;
    }
    expect(daemonLines.join('')).not.toContain(SECRET);
    expect(daemonLines.join('')).toContain('"event":"y"');
  });
});

describe('PeerSet', () => {
  const keys = new ClusterKeys(SECRET);
  const logger = { child: () => logger, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } as unknown as import('../../src/log.js').Logger;

  it('a fixed list: every peer by its tag, itself included, the others in turn', async () => {
    const { PeerSet } = await import('../../src/cluster/peer-set.js');
    const peers = new PeerSet({ self: 'http://127.0.0.1:9001/', peers: ['http://127.0.0.1:9002', 'http://127.0.0.1:9003/mcp'], keys, logger });
    expect(await peers.urlOf(keys.tagOf('http://127.0.0.1:9003'))).toBe('http://127.0.0.1:9003');
    expect(await peers.urlOf(peers.selfTag)).toBe('http://127.0.0.1:9001');
    expect(await peers.urlOf('000000000000')).toBeUndefined();
    const [first, second] = [peers.others(), peers.others()];
    expect(first).toHaveLength(2);
    expect(second).toEqual([first[1], first[0]]);
  });

  it('a DNS name: its addresses with the scheme and port of --cluster-self', async () => {
    const { PeerSet } = await import('../../src/cluster/peer-set.js');
    // This replica's own address is not what the name resolves to, so the peer found is the name's.
    const peers = new PeerSet({ self: 'http://127.0.0.2:9001', dns: 'localhost', keys, logger });
    // Not started yet: a tag nobody holds makes it look the name up there and then.
    expect(await peers.urlOf(keys.tagOf('http://127.0.0.1:9001'))).toBe('http://127.0.0.1:9001');
    await peers.start();
    try {
      expect(peers.others()).toContain('http://127.0.0.1:9001');
    } finally {
      peers.stop();
    }
  });
});
