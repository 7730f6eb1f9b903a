import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';

/**
 * Issue 13, CORS in a real browser: Debian's chromium, headless, driven by
 * playwright-core, loads a page from another origin that bundles the official
 * SDK clients (esbuild) and talks to the bridge: a 2026-07-28 client and an
 * initialize-era Streamable HTTP client make a tool call each, a page reads
 * the 401 challenge, and a page from an origin not allowed is refused.
 * Host names are mapped to 127.0.0.1 inside the browser, so nothing leaves loopback.
 */

const CHROMIUM = '/usr/bin/chromium';
const here = path.dirname(fileURLToPath(import.meta.url));
const ENTRY = path.join(here, '..', 'fixtures', 'browser', 'page-entry.mjs');
const SERVER = [process.execPath, path.join(here, '..', 'fixtures', 'crash-server.mjs')];
const TOKEN = 'browser-test-token-0123456789';

/** Serves the page and its bundle on 127.0.0.1:0 to any Host (the browser asks for page.test and evil.test). */
async function startPageServer(bundle: string): Promise<{ port: number; close(): Promise<void> }> {
  const html = '<!doctype html><meta charset="utf-8"><title>mcp-bridge CORS</title><script type="module" src="/page.js"></script>';
  const server = http.createServer((req, res) => {
    if (req.url === '/page.js') return void res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle);
    if (req.url === '/') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((r) => { server.close(() => r()); server.closeAllConnections(); }) };
}

describe('a browser page on another origin reaches the bridge through CORS', () => {
  let browser: Browser;
  let pages: Awaited<ReturnType<typeof startPageServer>>;
  let cli: RunningCli;
  let allowed: string;
  let refused: string;

  beforeAll(async () => {
    // Fail, never skip: .ci/run installs chromium; a machine without it must say so.
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y --no-install-recommends chromium); .ci/run does`);
    const bundled = await build({ entryPoints: [ENTRY], bundle: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent' });
    pages = await startPageServer(bundled.outputFiles[0].text);
    allowed = `http://page.test:${pages.port}`;
    refused = `http://evil.test:${pages.port}`;
    cli = await startCli(['--log-level', 'warn', '--auth-token', TOKEN, '--cors-origin', allowed, '--', ...SERVER]);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP page.test 127.0.0.1, MAP evil.test 127.0.0.1'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await cli?.close();
    await pages?.close();
  });

  async function openPage(origin: string) {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => typeof (window as unknown as { mcpModern?: unknown }).mcpModern === 'function');
    return page;
  }

  it('a 2026-07-28 SDK client calls a tool', async () => {
    const page = await openPage(allowed);
    try {
      const out = await page.evaluate(([url, token]) => (window as any).mcpModern(url, token), [`${cli.url}/mcp`, TOKEN] as const);
      expect(out.text).toBe('Echo: from a browser, 2026-07-28');
    } finally {
      await page.close();
    }
  });

  it('an initialize-era Streamable HTTP SDK client calls a tool, and reads the exposed Mcp-Session-Id', async () => {
    const page = await openPage(allowed);
    try {
      const out = await page.evaluate(([url, token]) => (window as any).mcpLegacy(url, token), [`${cli.url}/mcp`, TOKEN] as const);
      expect(out.text).toBe('Echo: from a browser, initialize era');
      expect(out.sessionId).toMatch(/\S{8,}/);
    } finally {
      await page.close();
    }
  });

  it('a page reads the status and WWW-Authenticate challenge of a request without the token', async () => {
    const page = await openPage(allowed);
    try {
      const out = await page.evaluate((url) => (window as any).unauthorized(url), `${cli.url}/mcp`);
      expect(out).toEqual({ status: 401, challenge: 'Bearer realm="mcp-bridge"' });
    } finally {
      await page.close();
    }
  });

  it('a page from an origin not allowed is refused: the browser sees a network error, the bridge answered 403', async () => {
    const page = await openPage(refused);
    try {
      const sdk = await page.evaluate(([url, token]) => (window as any).mcpModern(url, token).then(() => 'connected', (err: Error) => String(err)), [`${cli.url}/mcp`, TOKEN] as const);
      expect(sdk).not.toBe('connected');
      // Under the SDK's own error: the browser blocked the exchange (a CORS failure is a network error to scripts).
      const raw = await page.evaluate(([url, token]) => (window as any).rawPost(url, token), [`${cli.url}/mcp`, TOKEN] as const);
      expect(raw).toBe('TypeError: Failed to fetch');
    } finally {
      await page.close();
    }
    // The same preflight, sent outside a browser, shows what the bridge answered.
    const preflight = await fetch(`${cli.url}/mcp`, { method: 'OPTIONS', headers: { origin: refused, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' } });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const ok = await fetch(`${cli.url}/mcp`, { method: 'OPTIONS', headers: { origin: allowed, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region, x-not-allowed' } });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(ok.headers.get('access-control-allow-headers')).toBe('content-type, authorization, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region');
    expect(ok.headers.get('access-control-allow-methods')).toContain('POST');
  });
});
