import { createRequire } from 'node:module';
import type { UpstreamTarget } from './options.js';

const require = createRequire(import.meta.url);

/** The upstream used when none is given: the bundled reference server over stdio. */
export function bundledReferenceServer(): UpstreamTarget {
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  return { kind: 'command', command: process.execPath, args: [entry, 'stdio'] };
}
