import { afterEach, describe, expect, it } from 'vitest';
import { StdioProcess } from '../../src/links/stdio-process.js';
import { silentLogger } from '../../src/log.js';

const NODE = process.execPath;
const started: StdioProcess[] = [];

function spawnScript(script: string, extra: Partial<Parameters<typeof StdioProcess.spawn>[0]> = {}): StdioProcess {
  const p = StdioProcess.spawn({ command: NODE, args: ['-e', script], logger: silentLogger, stderr: 'discard', ...extra });
  started.push(p);
  return p;
}

function nextMessage(p: StdioProcess): Promise<unknown> {
  return new Promise((resolve) => p.onMessage(resolve));
}

function closeReason(p: StdioProcess): Promise<string> {
  return new Promise((resolve) => p.onClose(resolve));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.close(200)));
});

// Echoes every stdin line back on stdout, after a non-JSON line.
const ECHO = `process.stdin.setEncoding('utf8'); let b=''; process.stdin.on('data', d => { b += d; let i; while ((i = b.indexOf('\\n')) >= 0) { const l = b.slice(0, i); b = b.slice(i + 1); process.stdout.write('not json\\n' + l + '\\n'); } });`;

describe('StdioProcess', () => {
  it('sends one message per line and delivers parsed stdout lines, skipping non-JSON ones', async () => {
    const p = spawnScript(ECHO);
    const got = nextMessage(p);
    await p.send({ jsonrpc: '2.0', id: 1, method: 'x', params: { text: 'a\nb' } });
    expect(await got).toEqual({ jsonrpc: '2.0', id: 1, method: 'x', params: { text: 'a\nb' } });
  });

  it('writes the messages sent in one turn of the event loop in one write, in order, so the child reads them at once', async () => {
    // Answers each stdin chunk with how many lines it held.
    const p = spawnScript(`process.stdin.setEncoding('utf8'); process.stdin.on('data', d => process.stdout.write(JSON.stringify({ lines: d.split('\\n').filter(Boolean).map((l) => JSON.parse(l).id) }) + '\\n'));`);
    const got = nextMessage(p);
    await Promise.all([1, 2, 3].map((id) => p.send({ jsonrpc: '2.0', id, method: 'x' })));
    expect(await got).toEqual({ lines: [1, 2, 3] });
  });

  it('still writes what was sent just before close(), before the EOF', async () => {
    const p = spawnScript(`let b = ''; process.stdin.setEncoding('utf8'); process.stdin.on('data', (d) => (b += d)); process.stdin.on('end', () => { process.stderr.write(b); process.exit(b.includes('"id":7') ? 0 : 9); });`);
    const sent = p.send({ jsonrpc: '2.0', id: 7, method: 'x' });
    await p.close(2_000);
    await sent;
    expect(await closeReason(p)).toBe('exited with code 0');
  });

  it('ends a child whose stdin broke (closed by the child, which runs on) once a write to it fails, and says why', async () => {
    const p = spawnScript(`require('fs').closeSync(0); process.stdout.write('{"jsonrpc":"2.0","method":"ready"}\\n'); setInterval(() => {}, 1000);`);
    await nextMessage(p);
    const pid = p.pid!;
    const closed = closeReason(p);
    // Handed to the pipe: the sender is told at once; the failure comes from the write and ends the child.
    await p.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(await closed).toMatch(/could not be written to \(.*EPIPE.*\) and was ended: exited on signal SIGKILL/);
    expect(isAlive(pid)).toBe(false);
    await expect(p.send({ jsonrpc: '2.0', id: 2, method: 'ping' })).rejects.toThrow(/not running/);
  });

  it('reports a spawn failure through onClose and rejects send()', async () => {
    const p = StdioProcess.spawn({ command: 'mcp-bridge-no-such-command', args: [], logger: silentLogger });
    started.push(p);
    expect(await closeReason(p)).toMatch(/failed to start "mcp-bridge-no-such-command".*ENOENT/);
    await expect(p.send({ jsonrpc: '2.0', method: 'x' })).rejects.toThrow(/not running/);
    expect(p.exited).toBe(true);
  });

  it('reports an unexpected exit with its code', async () => {
    const p = spawnScript('setTimeout(() => process.exit(3), 50)');
    expect(await closeReason(p)).toBe('exited with code 3');
  });

  it('close() ends a child that exits on stdin EOF without signals', async () => {
    const p = spawnScript(ECHO);
    const pid = p.pid!;
    const t0 = Date.now();
    await p.close(5_000);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(p.exited).toBe(true);
    expect(isAlive(pid)).toBe(false);
  });

  it('close() escalates to SIGTERM, then SIGKILL, for a child that ignores EOF and SIGTERM', async () => {
    const p = spawnScript(`process.on('SIGTERM', () => {}); process.stdin.resume(); process.stdin.on('end', () => {}); setInterval(() => {}, 1000); process.stdout.write('{"ready":true}\\n');`);
    await nextMessage(p);
    const pid = p.pid!;
    const reason = closeReason(p);
    await p.close(150);
    expect(await reason).toBe('exited on signal SIGKILL');
    expect(isAlive(pid)).toBe(false);
  });
});
