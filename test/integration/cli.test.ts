import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startCli, type RunningCli } from '../helpers/cli.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';
import { childPidsOf, isAlive } from '../helpers/proc.js';

describe('mcp-bridge CLI', () => {
  const running: RunningCli[] = [];
  afterAll(async () => Promise.all(running.map((r) => r.close())));

  it('--help documents every flag with examples and exits 0', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const flag of ['--upstream', '--listen', '--stdio', '--upstream-epoch', '--header', '--allow-origin', '--log-level']) expect(r.stdout).toContain(flag);
    expect(r.stdout).toContain('Examples:');
  });

  it.each([
    [['--upstream', 'http://127.0.0.1:1/mcp', '--', 'node', 'x.js'], /either --upstream <url> or -- <command>/],
    [['--listen', 'nonsense'], /--listen must be host:port/],
    [['--upstream-epoch', 'future'], /Allowed choices are auto, modern, initialize, http\+sse/],
    [['--no-such-flag'], /unknown option/],
    [['probe'], /probe needs a URL or -- <command>/],
  ])('bad usage %j exits 2 with a message saying what to do', async (args, message) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('an upstream that cannot be reached exits 1 with a clear message', async () => {
    const r = await runCli(['--upstream', 'http://127.0.0.1:1/mcp']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/127\.0\.0\.1:1/);
  });

  it('a URL that is not MCP exits 1 and says so', async () => {
    const server = http.createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>nope</h1>'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const r = await runCli(['probe', `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/not look like an MCP server/i);
    } finally {
      server.close();
    }
  });

  it('probe --json -- <stdio command> prints one JSON object with the epoch and server facts', async () => {
    const r = await runCli(['probe', '--json', '--', ...EVERYTHING_STDIO_COMMAND]);
    expect(r.code).toBe(0);
    const facts = JSON.parse(r.stdout);
    expect(facts.epoch).toBe('initialize');
    expect(facts.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(facts.serverInfo.name).toBe('mcp-servers/everything');
    expect(facts.capabilities.tools).toBeDefined();
  });

  it('with no upstream it wraps the bundled reference server on loopback HTTP', async () => {
    // A port but no host: the host is the CLI's own default (port 0 only so parallel runs never collide).
    const cli = await startCli(['--listen', '0']);
    running.push(cli);
    expect(new URL(cli.url).hostname).toBe('127.0.0.1');
    expect(cli.stderr()).toMatch(/"event":"listening","url":"http:\/\/127\.0\.0\.1:\d+"/);
    const client = new Client({ name: 'cli-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`)));
    try {
      expect(client.getServerVersion()?.name).toBe('mcp-servers/everything');
      const res = await client.callTool({ name: 'echo', arguments: { message: 'hi from the quick start' } });
      expect(JSON.stringify(res.content)).toContain('hi from the quick start');
    } finally {
      await client.close();
    }
  });

  it('SIGTERM shuts down cleanly with exit code 0 and leaves no child behind', async () => {
    const cli = await startCli([]);
    const client = new Client({ name: 'cli-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`)));
    await client.callTool({ name: 'echo', arguments: { message: 'x' } });
    const children = childPidsOf(cli.child.pid!);
    expect(children.length).toBeGreaterThan(0); // the pooled reference server child serving that session
    const exited = new Promise<number | null>((r) => cli.child.once('exit', (code) => r(code)));
    cli.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect.poll(() => children.filter(isAlive), { timeout: 5_000 }).toEqual([]);
  });
});
