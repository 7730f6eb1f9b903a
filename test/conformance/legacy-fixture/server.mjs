#!/usr/bin/env node
// Legacy (2025-11-25, SDK v1) conformance fixture.
//   node server.mjs stdio          one session on stdin/stdout
//   node server.mjs http [port]    Streamable HTTP on 127.0.0.1; prints "listening <url>" on stderr
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createLegacyServer } from './create-server.mjs';
import { startLegacyHttp } from './http-server.mjs';

const [mode = 'stdio', port = '0'] = process.argv.slice(2);
if (mode === 'stdio') {
  await createLegacyServer().connect(new StdioServerTransport());
} else if (mode === 'http') {
  const running = await startLegacyHttp(Number(port));
  process.stderr.write(`legacy-fixture listening ${running.url}\n`);
  const stop = () => void running.close().finally(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} else {
  process.stderr.write('usage: server.mjs stdio | http [port]\n');
  process.exit(2);
}
