import path from 'node:path';
import type { LegacyLink, LegacyUpstreamSession, UpstreamInit } from '../contracts/upstream.js';
import { BridgeError } from '../errors.js';
import type { Logger } from '../log.js';
import { CrashBackoff } from './crash-backoff.js';
import { openPipeSession } from './pipe-session.js';
import { StdioProcess } from './stdio-process.js';

/** The command of a legacy stdio server, and how long its calls may take. */
export interface StdioLinkOptions {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  logger: Logger;
  callTimeoutMs?: number;
  /** How long close() waits at each shutdown step (stdin EOF, SIGTERM) before escalating. */
  shutdownGraceMs?: number;
  /** Longest stdout line accepted from the child. */
  maxLineBytes?: number;
}

/**
 * A LegacyLink for a command: every session is its own child process, so the
 * server's per-connection state (capabilities, subscriptions, log level) never
 * mixes. An exit ends only that session; the next openSession spawns afresh,
 * after a delay when children keep dying right after start (digest §3
 * "Unexpected exit").
 */
export class LegacyStdioLink implements LegacyLink {
  readonly kind = 'stdio' as const;
  private readonly log: Logger;
  private readonly children = new Set<StdioProcess>();
  private readonly backoff = new CrashBackoff();
  private readonly closing = new AbortController();
  private spawned = 0;
  private exits = 0;
  private lastExitAt: number | undefined;

  constructor(private readonly opts: StdioLinkOptions) {
    this.log = opts.logger.child({ link: 'stdio' });
  }

  /** Children that exited without being asked to (metrics, `/readyz`). */
  crashes(): { exits: number; quickExits: number; lastExitAt?: number } {
    return { exits: this.exits, quickExits: this.backoff.quickExits, lastExitAt: this.lastExitAt };
  }

  /** Process ids of the children alive now (diagnostics and tests). */
  pids(): number[] {
    return [...this.children].flatMap((c) => (c.pid !== undefined && !c.exited ? [c.pid] : []));
  }

  /**
   * Spawns a child and initializes it with `init`. Rejects with a BridgeError when
   * the child cannot start or dies first, an RpcError when it refuses initialize.
   */
  async openSession(init: UpstreamInit): Promise<LegacyUpstreamSession> {
    if (this.closing.signal.aborted) throw new BridgeError('BRIDGE_ERR_CLOSED', 'stdio link is closed');
    const delayMs = this.backoff.delayMs();
    if (delayMs > 0) {
      this.log.warn('stdio.backoff', { delayMs, quickExits: this.backoff.quickExits, command: this.opts.command });
      await this.sleep(delayMs);
    }
    const name = `${path.basename(this.opts.command)}#${++this.spawned}`;
    const child = StdioProcess.spawn({
      command: this.opts.command,
      args: this.opts.args,
      env: this.opts.env,
      cwd: this.opts.cwd,
      logger: this.opts.logger,
      name,
      maxLineBytes: this.opts.maxLineBytes,
    });
    this.track(child);
    try {
      return await openPipeSession(child, init, { logger: this.opts.logger, callTimeoutMs: this.opts.callTimeoutMs, kind: 'stdio' });
    } catch (err) {
      if (child.pid === undefined) {
        throw new BridgeError('BRIDGE_ERR_UPSTREAM_UNREACHABLE', `stdio server ${name} could not be started: ${(err as Error).message}`, { cause: err });
      }
      throw err;
    }
  }

  /** Ends every child (stdin EOF, SIGTERM, SIGKILL) and resolves once all have exited. */
  async close(): Promise<void> {
    this.closing.abort();
    const grace = this.opts.shutdownGraceMs;
    await Promise.all([...this.children].map((c) => c.close(grace)));
  }

  private track(child: StdioProcess): void {
    const startedAt = Date.now();
    this.children.add(child);
    child.onClose((reason) => {
      this.children.delete(child);
      if (child.closeRequested) return;
      const lived = Date.now() - startedAt;
      this.backoff.recordExit(lived);
      this.exits++;
      this.lastExitAt = Date.now();
      this.log.warn('stdio.child_exited', { pid: child.pid, reason, livedMs: lived, quickExits: this.backoff.quickExits });
    });
    // A link closed while this child was starting must not leave it behind.
    if (this.closing.signal.aborted) void child.close(this.opts.shutdownGraceMs);
  }

  private sleep(ms: number): Promise<void> {
    const signal = this.closing.signal;
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        reject(new BridgeError('BRIDGE_ERR_CLOSED', 'stdio link closed while waiting to respawn'));
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', done);
        resolve();
      }, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
