#!/usr/bin/env node
// Modern-only (2026-07-28, SDK v2) conformance fixture.
//   node server.mjs stdio          one connection on stdin/stdout (initialize is refused)
//   node server.mjs http [port]    Streamable HTTP on 127.0.0.1; prints "listening <url>" on stderr
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { modernServerFactory } from './create-server.mjs';
import { startModernHttp } from './http-server.mjs';

const [mode = 'stdio', port = '0'] = process.argv.slice(2);
if (mode === 'stdio') {
  // One instance per connection: it announces its own list changes.
  const factory = modernServerFactory({ changed: (kind, mcp) => (kind === 'tool' ? mcp.sendToolListChanged() : mcp.sendPromptListChanged()) });
  serveStdio(factory, { legacy: 'reject', onerror: (e) => process.stderr.write(`[modern-fixture] ${e.message}\n`) });
} else if (mode === 'http') {
  const running = await startModernHttp(Number(port));
  process.stderr.write(`modern-fixture listening ${running.url}\n`);
  const stop = () => void running.close().finally(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} else {
  process.stderr.write('usage: server.mjs stdio | http [port]\n');
  process.exit(2);
}
