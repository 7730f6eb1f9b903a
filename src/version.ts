import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Implementation } from '@modelcontextprotocol/server';

/** The package's version, read once from the nearest package.json above this module (src/ or dist/src/). */
function readVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'mcp-bridge' && pkg.version) return pkg.version;
    } catch {
      // not here; look one folder up
    }
    dir = path.dirname(dir);
  }
  return '0.0.0';
}

export const BRIDGE_VERSION = readVersion();

/** How the bridge names itself to servers (clientInfo) and clients (synthesized serverInfo). */
export const BRIDGE_IMPLEMENTATION: Implementation = { name: 'mcp-bridge', version: BRIDGE_VERSION };
