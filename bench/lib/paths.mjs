// Where things are, relative to this checkout.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** The bench/ folder. */
export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The repository root. */
export const ROOT_DIR = path.resolve(BENCH_DIR, '..');

/** The built CLI (`npm run build`); MCP_BRIDGE_BENCH_CLI points the bench at another build, for A/B runs. */
export const CLI_ENTRY = process.env.MCP_BRIDGE_BENCH_CLI ? path.resolve(process.env.MCP_BRIDGE_BENCH_CLI) : path.join(ROOT_DIR, 'dist', 'bin', 'mcp-bridge.js');

/** Forces 127.0.0.1 on any listen() and prints LOOPBACK_LISTENING host:port on stderr. */
export const LOOPBACK_PRELOAD = path.join(ROOT_DIR, 'test', 'helpers', 'loopback-preload.cjs');

/** server-everything's entry point (the legacy reference server). */
export const EVERYTHING_ENTRY = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

/** The bench's own upstream servers. */
export const SERVERS_DIR = path.join(BENCH_DIR, 'servers');

/** Where a run writes latest.md / latest.json (and profiles). */
export const RESULTS_DIR = path.join(BENCH_DIR, 'results');
