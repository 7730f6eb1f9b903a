import net from 'node:net';

/** A stdio link's record of children that exited without being asked to. */
export interface CrashRecord {
  /** Unrequested exits so far. */
  exits: number;
  /** Consecutive exits soon after start (the link backs off from the second on). */
  quickExits: number;
  /** When the last one happened (ms since epoch), if any. */
  lastExitAt?: number;
}

export interface ReadinessOptions {
  /** True once stopping (SIGTERM): a load balancer should send new clients elsewhere. */
  draining(): boolean;
  /** The stdio upstream's crash record; absent for URL upstreams. */
  crashes?(): CrashRecord;
  /** A URL upstream's address, checked with a TCP connect; absent for stdio. */
  address?: { host: string; port: number };
}

export type ReadinessState = { ready: true } | { ready: false; reason: 'probing' | 'draining' | 'crash-looping' | 'upstream-unreachable' | 'servers-not-ready'; detail: string };

/** What `GET /readyz` asks: one upstream's Readiness, or every server's of a config file (servers-readiness.ts). */
export interface ReadinessCheck {
  check(): Promise<ReadinessState>;
}

/** Quick exits in a row from which a stdio upstream counts as crash-looping (where the link starts backing off). */
const CRASH_LOOP_EXITS = 2;
/** A crash loop is current while its last exit is this recent; a child that has lived longer since is taken as recovered. */
const CRASH_LOOP_WINDOW_MS = 10_000;
/** How long a reachability answer is reused, so frequent health checks do not each open a connection. */
const REACH_CACHE_MS = 2_000;
const REACH_TIMEOUT_MS = 1_000;

/**
 * `/readyz`: whether this bridge should get traffic. Not ready until the
 * upstream has been probed, while a stdio child is crash-looping, while a URL
 * upstream refuses TCP connections, and while draining. Liveness stays
 * `/healthz`, which only says the process answers.
 */
export class Readiness {
  private probed = false;
  private reach: { at: number; ok: Promise<string | undefined> } | undefined;

  constructor(private readonly opts: ReadinessOptions) {}

  /** Detection has finished and the link is built. */
  markProbed(): void {
    this.probed = true;
  }

  async check(now = Date.now()): Promise<ReadinessState> {
    if (!this.probed) return { ready: false, reason: 'probing', detail: 'the upstream has not been probed yet' };
    if (this.opts.draining()) return { ready: false, reason: 'draining', detail: 'mcp-bridge is shutting down' };
    const crashes = this.opts.crashes?.();
    if (crashes && crashes.quickExits >= CRASH_LOOP_EXITS && crashes.lastExitAt !== undefined && now - crashes.lastExitAt < CRASH_LOOP_WINDOW_MS) {
      return { ready: false, reason: 'crash-looping', detail: `the stdio server exited ${crashes.quickExits} times in a row soon after start` };
    }
    const address = this.opts.address;
    if (address) {
      if (!this.reach || now - this.reach.at > REACH_CACHE_MS) this.reach = { at: now, ok: connectError(address.host, address.port) };
      const failed = await this.reach.ok;
      if (failed !== undefined) return { ready: false, reason: 'upstream-unreachable', detail: `cannot connect to ${address.host}:${address.port}: ${failed}` };
    }
    return { ready: true };
  }
}

/** Undefined when a TCP connection opens within the timeout, else why not. */
function connectError(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (why: string | undefined) => {
      socket.destroy();
      resolve(why);
    };
    socket.setTimeout(REACH_TIMEOUT_MS, () => done('timed out'));
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

/** The host and port a URL upstream listens on (default ports by scheme). */
export function upstreamAddress(url: string): { host: string; port: number } {
  const u = new URL(url);
  const secure = u.protocol === 'https:' || u.protocol === 'wss:';
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return { host, port: u.port === '' ? (secure ? 443 : 80) : Number(u.port) };
}
