import type { CallHandlers, ModernLink, OutboundRequest } from '../contracts/upstream.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { notification, request, type RpcOutcome } from '../jsonrpc/messages.js';
import type { Logger } from '../log.js';
import { CrashBackoff } from './crash-backoff.js';
import { ModernStdioCalls, type ModernStdioCall } from './modern-stdio-calls.js';
import { StdioProcess } from './stdio-process.js';

export interface ModernStdioLinkOptions {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  logger: Logger;
  /** Deadline of a call without its own `timeoutMs`; `subscriptions/listen` has none by default. */
  callTimeoutMs?: number;
  /** Prefix of the child's stderr lines. */
  name?: string;
  /** Longest stdout line accepted from the child. */
  maxLineBytes?: number;
}

const DEFAULT_CALL_TIMEOUT_MS = 5 * 60_000;

function failure(message: string): RpcOutcome {
  return { error: { code: RpcCode.InternalError, message } };
}

/**
 * A ModernLink to a 2026-07-28 stdio server: one child, every call multiplexed
 * on it with the link's own wire ids (digest §3). A child that exits ends its
 * calls at once; the next call respawns it, with backoff when it keeps crashing.
 */
export class ModernStdioLink implements ModernLink {
  readonly kind = 'stdio' as const;
  private readonly opts: ModernStdioLinkOptions;
  private readonly log: Logger;
  private readonly calls: ModernStdioCalls;
  private readonly backoff = new CrashBackoff();
  private child: StdioProcess | undefined;
  private starting: Promise<StdioProcess | undefined> | undefined;
  private generation = 0;
  private exits = 0;
  private lastExitAt: number | undefined;
  private closed = false;

  constructor(opts: ModernStdioLinkOptions) {
    this.opts = opts;
    this.log = opts.logger.child({ link: 'modern-stdio' });
    this.calls = new ModernStdioCalls(this.log);
  }

  /** Children that exited without being asked to (metrics, `/readyz`). */
  crashes(): { exits: number; quickExits: number; lastExitAt?: number } {
    return { exits: this.exits, quickExits: this.backoff.quickExits, lastExitAt: this.lastExitAt };
  }

  /** The running child's pid, if one is running. */
  get pid(): number | undefined {
    return this.child && !this.child.exited ? this.child.pid : undefined;
  }

  /** Resolves with the call's outcome; never rejects. Listen notifications carry the caller's id as subscriptionId. */
  async call(req: OutboundRequest, handlers: CallHandlers = {}): Promise<RpcOutcome> {
    if (this.closed) return failure('the upstream link is closed');
    if (handlers.signal?.aborted) return failure(`upstream call ${req.method} cancelled`);
    const child = await this.ensureChild();
    if (this.closed || !child) return failure('the upstream link is closed');
    if (handlers.signal?.aborted) return failure(`upstream call ${req.method} cancelled`);
    const generation = this.generation;
    const wireId = this.calls.mintId();
    const params = this.calls.progress.rewrite(req.params, wireId);
    const timeoutMs = handlers.timeoutMs ?? (req.method === 'subscriptions/listen' ? undefined : (this.opts.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS));

    return new Promise<RpcOutcome>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => this.cancel(call, `upstream call ${req.method} cancelled`, 'cancelled by the client');
      const call: ModernStdioCall = this.calls.add({ wireId, callerId: req.id, method: req.method, handlers, generation, params }, resolve, () => {
        if (timer) clearTimeout(timer);
        handlers.signal?.removeEventListener('abort', onAbort);
      });
      handlers.signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined && timeoutMs > 0) {
        timer = setTimeout(() => this.cancel(call, `upstream call ${req.method} timed out after ${timeoutMs} ms`, `timed out after ${timeoutMs} ms`), timeoutMs);
      }
      child.send(request(wireId, req.method, params)).catch((err: Error) => call.settle(failure(`could not send ${req.method} upstream: ${err.message}`)));
    });
  }

  /** Ends every call and the child (stdin EOF, then SIGTERM, then SIGKILL). */
  async close(): Promise<void> {
    this.closed = true;
    this.calls.settleAll('the upstream link closed');
    const child = this.child ?? (await this.starting?.catch(() => undefined));
    this.child = undefined;
    await child?.close();
  }

  /** Closing the stream is not available on stdio: cancel is `notifications/cancelled` with the wire id (digest §1.9). */
  private cancel(call: ModernStdioCall, message: string, reason: string): void {
    if (call.settled) return;
    call.settle(failure(message));
    const child = this.child;
    if (child && !child.exited && call.generation === this.generation) {
      child.send(notification('notifications/cancelled', { requestId: call.wireId, reason })).catch(() => undefined);
    }
  }

  private ensureChild(): Promise<StdioProcess | undefined> {
    if (this.child && !this.child.exited) return Promise.resolve(this.child);
    this.starting ??= this.spawn().finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** Undefined when the link closed while waiting out the backoff. */
  private async spawn(): Promise<StdioProcess | undefined> {
    const delay = this.backoff.delayMs();
    if (delay > 0) {
      this.log.warn('upstream.stdio.respawn-backoff', { delayMs: delay, quickExits: this.backoff.quickExits });
      await new Promise((r) => setTimeout(r, delay));
      if (this.closed) return undefined;
    }
    const generation = ++this.generation;
    const started = Date.now();
    const child = StdioProcess.spawn({
      command: this.opts.command,
      args: this.opts.args,
      env: this.opts.env,
      cwd: this.opts.cwd,
      logger: this.opts.logger,
      name: this.opts.name,
      maxLineBytes: this.opts.maxLineBytes,
    });
    child.onMessage((msg) => {
      for (const one of Array.isArray(msg) ? msg : [msg]) {
        const reply = this.calls.route(one);
        if (reply) child.send(reply).catch(() => undefined);
      }
    });
    child.onClose((reason) => {
      if (this.child === child) this.child = undefined;
      // digest §3 "Unexpected exit": in-flight requests are lost; answer them now.
      this.calls.settleGeneration(generation, `upstream stdio server ${reason}`);
      if (!this.closed && !child.closeRequested) {
        this.backoff.recordExit(Date.now() - started);
        this.exits++;
        this.lastExitAt = Date.now();
        this.log.warn('upstream.stdio.exit', { reason, livedMs: Date.now() - started });
      }
    });
    this.child = child;
    return child;
  }
}
