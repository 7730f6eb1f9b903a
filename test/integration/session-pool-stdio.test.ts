import type { JSONRPCRequest } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { LegacyUpstreamSession, UpstreamInit } from '../../src/contracts/upstream.js';
import { LegacyStdioLink } from '../../src/links/legacy-stdio-link.js';
import { SessionPool } from '../../src/links/session-pool.js';
import { silentLogger } from '../../src/log.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';

const [COMMAND, ...ARGS] = EVERYTHING_STDIO_COMMAND;
const INIT: UpstreamInit = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pool-test', version: '1.0.0' } };

const opened: Array<{ link: LegacyStdioLink; pool: SessionPool }> = [];

function newPool(max: number, idleMs = 60_000): { link: LegacyStdioLink; pool: SessionPool } {
  const link = new LegacyStdioLink({ command: COMMAND, args: ARGS, logger: silentLogger, shutdownGraceMs: 1_000 });
  const pool = new SessionPool(link, { max, idleMs, logger: silentLogger });
  opened.push({ link, pool });
  return { link, pool };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function echo(session: LegacyUpstreamSession, message: string): Promise<string> {
  const outcome = await session.call({ method: 'tools/call', params: { name: 'echo', arguments: { message } } });
  if ('error' in outcome) throw new Error(outcome.error.message);
  return (outcome.result.content as Array<{ text: string }>)[0].text;
}

afterEach(async () => {
  for (const { link, pool } of opened.splice(0)) {
    await pool.close();
    await link.close();
  }
});

describe('SessionPool over server-everything children', () => {
  it('with max 1, a second exclusive acquire waits until the first lease is released', async () => {
    const { pool, link } = newPool(1);
    const first = await pool.acquire(INIT, { exclusive: true });
    let secondGranted = false;
    const second = pool.acquire(INIT, { exclusive: true }).then((l) => ((secondGranted = true), l));
    expect(await echo(first.session, 'one')).toContain('one');
    expect(secondGranted).toBe(false);
    expect(pool.stats()).toEqual({ sessions: 1, leased: 1, queued: 1 });
    first.release();
    const lease = await second;
    expect(lease.session).toBe(first.session);
    expect(link.pids()).toHaveLength(1);
  });

  it('with max 2, two exclusive acquires run on two children at once', async () => {
    const { pool, link } = newPool(2);
    const [a, b] = await Promise.all([pool.acquire(INIT, { exclusive: true }), pool.acquire(INIT, { exclusive: true })]);
    expect(a.session).not.toBe(b.session);
    const pids = link.pids();
    expect(pids).toHaveLength(2);
    expect(new Set(pids).size).toBe(2);
    expect(await Promise.all([echo(a.session, 'a'), echo(b.session, 'b')])).toEqual([expect.stringContaining('a'), expect.stringContaining('b')]);
  });

  it('closes a session (and its child) idle longer than idleMs', async () => {
    const { pool, link } = newPool(1, 300);
    const lease = await pool.acquire(INIT, { exclusive: false });
    const [pid] = link.pids();
    lease.release();
    const deadline = Date.now() + 5_000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(isAlive(pid)).toBe(false);
    expect(pool.stats().sessions).toBe(0);
  });

  it('drops a session whose child dies, and the next acquire spawns a fresh child', async () => {
    const { pool, link } = newPool(1);
    const lease = await pool.acquire(INIT, { exclusive: true });
    const [pid] = link.pids();
    const closed = new Promise((resolve) => lease.session.onClose(resolve));
    process.kill(pid, 'SIGKILL');
    await closed;
    lease.release();
    const next = await pool.acquire(INIT, { exclusive: true });
    expect(next.session).not.toBe(lease.session);
    expect(link.pids()).not.toContain(pid);
    expect(await echo(next.session, 'again')).toContain('again');
  });

  it('hands an unsolicited roots/list to the pool listener with the session it came from', async () => {
    const { pool } = newPool(1);
    const got = new Promise<{ session: LegacyUpstreamSession; req: JSONRPCRequest }>((resolve) => {
      pool.addListener({ request: async (session, req) => (resolve({ session, req }), { roots: [] }) });
    });
    const anchor = await pool.anchor({ ...INIT, capabilities: { roots: { listChanged: true } } });
    const { session, req } = await got;
    expect(req.method).toBe('roots/list');
    expect(session).toBe(anchor);
  });

  it('close() leaves no child running', async () => {
    const { pool, link } = newPool(2);
    const a = await pool.acquire(INIT, { exclusive: true });
    await pool.acquire({ ...INIT, capabilities: { sampling: {} } }, { exclusive: true });
    a.release();
    const pids = link.pids();
    expect(pids).toHaveLength(2);
    await pool.close();
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(pool.stats()).toEqual({ sessions: 0, leased: 0, queued: 0 });
  });
});
