import { rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { modernPost, readMessages } from '../helpers/faults.js';
import { startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';

/**
 * Issue 13, readiness: `/readyz` answers 503 with a JSON reason while a stdio
 * child crash-loops (and 200 again once it has recovered), and while an HTTP
 * upstream is unreachable; `/healthz` stays liveness throughout.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE = path.join(here, '..', 'fixtures', 'crash-loop-server.mjs');

async function readyz(base: string): Promise<{ status: number; body: { status: string; reason?: string; detail?: string } }> {
  const res = await fetch(`${base}/readyz`);
  return { status: res.status, body: (await res.json()) as { status: string; reason?: string } };
}

/** Repeats `step` until `done` says so, at most `tries` times: every loop here is bounded. */
async function repeatUntil(step: () => Promise<void>, done: () => Promise<boolean>, tries: number): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await done()) return;
    await step();
  }
  if (!(await done())) throw new Error(`condition not met after ${tries} tries`);
}

const echo = async (base: string, id: number) => {
  const messages = await readMessages(await modernPost(base, id, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }));
  return messages.find((m) => m.id === id)!;
};

describe('/readyz in front of a stdio child that crash-loops', () => {
  let cli: RunningCli;
  let dir: string;
  let flag: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'readyz-'));
    flag = path.join(dir, 'crash');
    cli = await startCli(['--log-level', 'error', '--', process.execPath, FIXTURE, flag]);
  });
  afterAll(async () => {
    await cli?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is 200 once probed, 503 "crash-looping" while children die at start, and 200 again after they recover', async () => {
    expect(await readyz(cli.url)).toEqual({ status: 200, body: { status: 'ready' } });
    expect('result' in (await echo(cli.url, 1))).toBe(true);

    // From now on every child exits at start; the running one is made to exit mid-call.
    writeFileSync(flag, '');
    await readMessages(await modernPost(cli.url, 2, 'tools/call', { name: 'crash', arguments: {} }));
    let id = 10;
    await repeatUntil(
      async () => void (await echo(cli.url, id++)),
      async () => (await readyz(cli.url)).status === 503,
      20,
    );
    const down = await readyz(cli.url);
    expect(down.body).toMatchObject({ status: 'not ready', reason: 'crash-looping' });
    expect(down.body.detail).toMatch(/exited \d+ times in a row/);
    expect((await fetch(`${cli.url}/healthz`)).status).toBe(200);

    // The server is fixed: a call succeeds on a fresh child, and readiness follows once the loop is past.
    rmSync(flag);
    await repeatUntil(async () => void (await echo(cli.url, id++)), async () => 'result' in (await echo(cli.url, id++)), 20);
    const deadline = Date.now() + 30_000;
    while ((await readyz(cli.url)).status !== 200) {
      if (Date.now() > deadline) throw new Error('/readyz did not recover');
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await readyz(cli.url)).toEqual({ status: 200, body: { status: 'ready' } });
  }, 90_000);
});

describe('/readyz in front of an HTTP upstream that goes away', () => {
  let cli: RunningCli;
  let upstream: RunningModernServer;

  beforeAll(async () => {
    upstream = await startModernHttpServer();
    cli = await startCli(['--log-level', 'error', '--upstream', upstream.url]);
  });
  afterAll(async () => {
    await cli?.close();
    await upstream?.close().catch(() => undefined);
  });

  it('is 200 while the upstream accepts connections and 503 "upstream-unreachable" once it stops listening', async () => {
    expect(await readyz(cli.url)).toEqual({ status: 200, body: { status: 'ready' } });
    await upstream.close();
    const deadline = Date.now() + 10_000;
    let state = await readyz(cli.url);
    while (state.status !== 503 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      state = await readyz(cli.url);
    }
    expect(state.status).toBe(503);
    expect(state.body).toMatchObject({ status: 'not ready', reason: 'upstream-unreachable' });
    expect(state.body.detail).toContain('ECONNREFUSED');
    expect((await fetch(`${cli.url}/healthz`)).status).toBe(200);
  });
});
