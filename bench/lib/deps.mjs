// Tools the bench needs but the project does not depend on: installed on first
// use into git-ignored folders with npm's ordinary client, pinned.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR } from './paths.mjs';

const DEPS_DIR = path.join(BENCH_DIR, '.deps');
const PEERS_DIR = path.join(BENCH_DIR, '.peers');

/** The load generator's client library. */
const UNDICI = { name: 'undici', version: '7.30.2' };

/** What bench/logger-cost.mjs compares the bridge's logger with (issue 13). */
const PINO = { name: 'pino', version: '10.4.0' };

/** The peer bridges of row 2 and row 4, at the versions the issue names. */
const PEERS = [
  { name: 'supergateway', version: '4.0.0', entry: 'dist/index.js' },
  { name: 'mcp-proxy', version: '6.7.19', entry: 'dist/bin/mcp-proxy.mjs' },
];

function installedVersion(prefix, name) {
  const file = path.join(prefix, 'node_modules', name, 'package.json');
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')).version;
}

function ensure(prefix, packages, log) {
  const missing = packages.filter((p) => installedVersion(prefix, p.name) !== p.version);
  if (missing.length === 0) return;
  const specs = missing.map((p) => `${p.name}@${p.version}`);
  log(`installing ${specs.join(' ')} into ${path.relative(process.cwd(), prefix)}/ (first run only)`);
  execFileSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', ...specs], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 180_000,
  });
}

/** Loads undici from bench/.deps, installing it first when absent. */
export async function loadUndici(log) {
  ensure(DEPS_DIR, [UNDICI], log);
  return import(pathToFileURL(path.join(DEPS_DIR, 'node_modules', 'undici', 'index.js')).href);
}

/** Loads pino from bench/.deps/logger (a prefix of its own, so installing it leaves undici alone). */
export async function loadLoggerDeps(log) {
  const prefix = path.join(DEPS_DIR, 'logger');
  ensure(prefix, [PINO], log);
  const mod = await import(pathToFileURL(path.join(prefix, 'node_modules', 'pino', 'pino.js')).href);
  return { pino: mod.default ?? mod.pino };
}

/** Absolute entry scripts of the peers, installing them first when absent. */
export function peerEntries(log) {
  ensure(PEERS_DIR, PEERS, log);
  const out = {};
  for (const p of PEERS) out[p.name] = path.join(PEERS_DIR, 'node_modules', p.name, p.entry);
  return out;
}

/** Pinned versions, for the report. */
export const TOOL_VERSIONS = Object.fromEntries([UNDICI, ...PEERS].map((p) => [p.name, p.version]));
