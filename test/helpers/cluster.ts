import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCli, type RunningCli } from './cli.js';
import { freePort } from './faults.js';
import { stopProcess } from './processes.js';

/** A cluster secret for tests (≥ 32 bytes). */
export const TEST_CLUSTER_SECRET = 'test-cluster-secret-0123456789abcdef-0123456789';

/** One replica: its fixed port (peers must know it before it starts) and the running CLI. */
export interface Replica {
  port: number;
  url: string;
  cli: RunningCli;
}

/** Ports for `n` replicas, chosen before any starts (each names all of them in --cluster-peers). */
export async function replicaPorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < n) {
    const p = await freePort();
    if (!ports.includes(p)) ports.push(p);
  }
  return ports;
}

/** Starts the built CLI as the replica on `port` of the cluster `ports`, in front of `upstream`. */
export async function startReplica(port: number, ports: number[], upstream: string[], extra: string[] = []): Promise<Replica> {
  const url = `http://127.0.0.1:${port}`;
  const cli = await startCli([
    '--listen', `127.0.0.1:${port}`,
    '--cluster-self', url,
    '--cluster-peers', ports.map((p) => `http://127.0.0.1:${p}`).join(','),
    '--cluster-secret', TEST_CLUSTER_SECRET,
    ...extra,
    ...upstream,
  ]);
  return { port, url, cli };
}

export interface RunningHaproxy {
  url: string;
  port: number;
  child: ChildProcess;
  /** HAProxy's log of the last requests (httplog, newest last): the termination state says which side broke a connection. */
  log(): string[];
  /** Resolves once HAProxy's health checks report backend server `index` UP (bounded). */
  serverUp(index: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * HAProxy (Debian's package) round-robin in front of `backendPorts`, knowing
 * nothing of MCP: per-request balancing, /healthz checks, and a retry on
 * another server when one refuses the connection or answers 503 (a replica
 * that stopped listening, or one answering while it drains).
 */
export async function startHaproxy(backendPorts: number[], timeoutMs = 15_000): Promise<RunningHaproxy> {
  const port = await freePort();
  const statsPort = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-bridge-haproxy-'));
  const cfg = path.join(dir, 'haproxy.cfg');
  writeFileSync(cfg, haproxyConfig(port, backendPorts, statsPort));
  const child = spawn('haproxy', ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
  // Startup messages, then one line per request (bounded: a failing test wants the last ones).
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
    if (stderr.length > LOG_KEEP_CHARS) stderr = stderr.slice(stderr.indexOf('\n', stderr.length - LOG_KEEP_CHARS) + 1);
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}): ${stderr}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`haproxy did not serve in ${timeoutMs} ms: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    port,
    child,
    log: () => stderr.split('\n').filter((l) => l !== ''),
    serverUp: async (index, upTimeoutMs = 30_000) => {
      const until = Date.now() + upTimeoutMs;
      for (;;) {
        // The stats CSV: proxy name, server name, …, column 18 is the status.
        const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text();
        const row = csv.split('\n').find((l) => l.startsWith(`bridges,b${index},`));
        if (row?.split(',')[17] === 'UP') return;
        if (Date.now() > until) throw new Error(`haproxy never saw b${index} up: ${row}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: async () => {
      await stopProcess(child, 2_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** How much of HAProxy's log a test keeps (the newest lines). */
const LOG_KEEP_CHARS = 1_000_000;

/** The config the test generates: the same settings as deploy/haproxy/haproxy.cfg, on loopback. */
export function haproxyConfig(port: number, backendPorts: number[], statsPort?: number): string {
  return [
    'global',
    '  maxconn 4000',
    // The test's own addition: a line per request on stderr, for a failing case to show.
    '  log stderr format raw local0 info',
    'defaults',
    '  mode http',
    '  log global',
    '  option httplog',
    '  timeout connect 2s',
    '  timeout client 120s',
    '  timeout server 120s',
    '  timeout http-request 10s',
    '  timeout http-keep-alive 10s',
    // A loaded machine answers a check late now and then: that is not a replica gone.
    '  timeout check 2s',
    '  retries 3',
    '  option redispatch 1',
    '  retry-on conn-failure empty-response 503',
    '  option http-buffer-request',
    'frontend mcp',
    `  bind 127.0.0.1:${port}`,
    '  default_backend bridges',
    'backend bridges',
    '  balance roundrobin',
    // Without this a client believes the replica's `Keep-Alive: timeout=65` and reuses a connection
    // HAProxy closed at 10 s idle: its POST fails with "fetch failed" (seen in CI, under load).
    '  http-response del-header keep-alive',
    '  option httpchk GET /healthz',
    '  http-check expect status 200',
    '  default-server inter 300ms fall 2 rise 2',
    ...backendPorts.map((p, i) => `  server b${i} 127.0.0.1:${p} check`),
    ...(statsPort === undefined ? [] : ['frontend stats', `  bind 127.0.0.1:${statsPort}`, '  stats enable', '  stats uri /stats']),
    '',
  ].join('\n');
}
