import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { BridgeError } from '../errors.js';
import { parseJsonRpc, stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import type { Logger } from '../log.js';
import { LineBuffer, LineTooLongError } from '../wire/line-buffer.js';
import type { MessagePipe } from './message-pipe.js';

/** How to launch one stdio server child. */
export interface StdioProcessOptions {
  command: string;
  args: string[];
  /** Added to (and overriding) the bridge's own environment. */
  env?: Record<string, string>;
  cwd?: string;
  logger: Logger;
  /** Prefix for the child's stderr lines, passed through to the bridge's stderr. */
  name?: string;
  /** 'inherit-prefixed' (default): each stderr line written to process.stderr as `[name] line`; 'discard': dropped (probe siblings). */
  stderr?: 'inherit-prefixed' | 'discard';
  maxLineBytes?: number;
}

const DEFAULT_GRACE_MS = 2_000;
/** After 'exit', how long to wait for stdout to drain before reporting the close anyway (a grandchild may hold it open). */
const DRAIN_AFTER_EXIT_MS = 250;
const MAX_STDERR_LINE = 64 * 1024;

/**
 * One spawned child speaking newline-delimited JSON on stdin/stdout (digest §3
 * "Framing"). stderr is free-form log text and never means an error.
 */
export class StdioProcess implements MessagePipe {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly log: Logger;
  private readonly lines: LineBuffer;
  private messageListener: ((msg: unknown) => void) | undefined;
  /** Messages that arrived before onMessage was called. */
  private early: unknown[] = [];
  private readonly closeListeners: Array<(reason: string) => void> = [];
  private closeReason: string | undefined;
  private spawnError: Error | undefined;
  /** Why stdin stopped taking writes, once it did (the child is then ended). */
  private stdinFailure: Error | undefined;
  private exitInfo: string | undefined;
  private closeRequestedFlag = false;
  private readonly exitPromise: Promise<void>;
  private resolveExit!: () => void;
  /** Lines sent since the last flush, and who waits for them to be written. */
  private outLines: string[] = [];
  private outWaiters: Array<{ resolve(): void; reject(err: Error): void }> = [];
  private flushScheduled = false;

  private constructor(private readonly opts: StdioProcessOptions) {
    this.log = opts.logger.child({ link: 'stdio', child: opts.name ?? opts.command });
    this.lines = new LineBuffer({ maxLineBytes: opts.maxLineBytes });
    this.exitPromise = new Promise((resolve) => (this.resolveExit = resolve));
    this.child = spawn(opts.command, opts.args, {
      cwd: opts.cwd,
      env: opts.env ? { ...process.env, ...opts.env } : process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    this.wire();
  }

  /** Spawns the child. A spawn failure (ENOENT...) is reported through onClose, and send() rejects. */
  static spawn(opts: StdioProcessOptions): StdioProcess {
    return new StdioProcess(opts);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True once the child has exited (or never started). */
  get exited(): boolean {
    return this.closeReason !== undefined;
  }

  /** False once the child exited or its stdin closed, even while its last stdout lines drain. */
  get writable(): boolean {
    return this.closeReason === undefined && this.exitInfo === undefined && this.child.stdin.writable;
  }

  /** True once close() was called: the exit that follows was asked for. */
  get closeRequested(): boolean {
    return this.closeRequestedFlag;
  }

  send(msg: JSONRPCMessage | JSONRPCMessage[]): Promise<void> {
    if (this.child.pid === undefined) {
      // The spawn error event comes a tick later; reject with its reason.
      return this.exitPromise.then(() => Promise.reject(this.notRunning('BRIDGE_ERR_UPSTREAM_UNREACHABLE')));
    }
    if (this.closeReason !== undefined || !this.child.stdin.writable) return Promise.reject(this.notRunning('BRIDGE_ERR_UPSTREAM_CLOSED'));
    // JSON.stringify escapes newlines inside strings, so one message is one line.
    const line = stringifyJsonRpc(msg) + '\n';
    return new Promise((resolve, reject) => {
      this.outLines.push(line);
      this.outWaiters.push({ resolve, reject });
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setImmediate(this.flush);
    });
  }

  /**
   * Writes every line sent during this turn of the event loop at once. Under
   * load, requests of many clients arrive in one turn: one write (and one
   * wakeup of the child, which then reads them all) instead of one each.
   */
  private readonly flush = (): void => {
    this.flushScheduled = false;
    const lines = this.outLines;
    const waiters = this.outWaiters;
    if (lines.length === 0) return;
    this.outLines = [];
    this.outWaiters = [];
    if (this.closeReason !== undefined || !this.child.stdin.writable) {
      const err = this.notRunning('BRIDGE_ERR_UPSTREAM_CLOSED');
      for (const w of waiters) w.reject(err);
      return;
    }
    // The senders are told at hand-off, not from the write's callback: a callback closing over them, or
    // their resolvers queued until it ran, kept every call of the batch alive past the next young-generation
    // GC, so each was promoted (issue 17, rows 2 and 3: ~1.6 MB per scavenge). A write that fails after
    // hand-off ends the child instead (onWriteFailed), and its calls fail through the close, as at an exit.
    for (const w of waiters) w.resolve();
    this.child.stdin.write(lines.length === 1 ? lines[0] : lines.join(''), this.afterWrite);
  };

  /** One callback for every write (no closure per batch). */
  private readonly afterWrite = (err?: Error | null): void => {
    if (err) this.onWriteFailed(err);
  };

  /** stdin broke (EPIPE, a child that closed it): nothing more can be sent, so the child is ended and its calls fail. */
  private onWriteFailed(err: Error): void {
    if (this.stdinFailure !== undefined || this.closeReason !== undefined) return;
    this.stdinFailure = err;
    this.log.warn('stdio.stdin_write_failed', { pid: this.pid, error: err });
    this.child.kill('SIGKILL');
  }

  onMessage(listener: (msg: unknown) => void): void {
    this.messageListener = listener;
    const queued = this.early;
    this.early = [];
    for (const m of queued) listener(m);
  }

  /** Called once with the reason the child ended; a listener added after that is called at once. */
  onClose(listener: (reason: string) => void): void {
    if (this.closeReason !== undefined) {
      const reason = this.closeReason;
      queueMicrotask(() => listener(reason));
      return;
    }
    this.closeListeners.push(listener);
  }

  /** stdin EOF, wait graceMs (default 2000), SIGTERM, wait, SIGKILL (digest §3 Shutdown). Resolves when exited. */
  async close(graceMs = DEFAULT_GRACE_MS): Promise<void> {
    this.closeRequestedFlag = true;
    if (this.closeReason !== undefined) return;
    // What was sent before close() goes out before the EOF.
    this.flush();
    this.child.stdin.end();
    if (await this.exitedWithin(graceMs)) return;
    this.log.info('stdio.sigterm', { pid: this.pid, graceMs });
    this.child.kill('SIGTERM');
    if (await this.exitedWithin(graceMs)) return;
    this.log.warn('stdio.sigkill', { pid: this.pid });
    this.child.kill('SIGKILL');
    await this.exitPromise;
  }

  private exitedWithin(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void this.exitPromise.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private notRunning(code: 'BRIDGE_ERR_UPSTREAM_UNREACHABLE' | 'BRIDGE_ERR_UPSTREAM_CLOSED'): BridgeError {
    return new BridgeError(code, `stdio server ${this.label()} is not running: ${this.closeReason ?? 'stdin closed'}`, { cause: this.spawnError });
  }

  private label(): string {
    return this.opts.name ?? this.opts.command;
  }

  private wire(): void {
    const { child } = this;
    child.on('error', (err) => {
      if (child.pid === undefined) {
        this.spawnError = err;
        this.finish(`failed to start ${JSON.stringify(this.opts.command)}: ${err.message}`);
      } else {
        this.log.warn('stdio.child_error', { pid: child.pid, error: err });
      }
    });
    // EPIPE after the child died: reported through send()'s callback and the exit; nothing to throw.
    child.stdin.on('error', (err) => this.log.debug('stdio.stdin_error', { pid: child.pid, error: err }));
    child.stdout.on('data', (chunk: Buffer) => this.onStdout(chunk));
    this.wireStderr();
    child.on('exit', (code, signal) => {
      const exited = signal ? `exited on signal ${signal}` : `exited with code ${code}`;
      this.exitInfo = this.stdinFailure ? `could not be written to (${this.stdinFailure.message}) and was ended: ${exited}` : exited;
      this.log.info('stdio.exit', { pid: child.pid, code, signal, requested: this.closeRequestedFlag });
      setTimeout(() => this.finish(this.exitInfo!), DRAIN_AFTER_EXIT_MS).unref();
    });
    child.on('close', () => this.finish(this.exitInfo ?? 'closed its stdio'));
    if (child.pid !== undefined) this.log.info('stdio.spawn', { pid: child.pid, command: this.opts.command, args: this.opts.args });
  }

  private onStdout(chunk: Buffer): void {
    let lines: string[];
    try {
      lines = this.lines.push(chunk);
    } catch (err) {
      if (!(err instanceof LineTooLongError)) throw err;
      // The rest of an oversized line cannot be resynchronised, and the response
      // it carried is lost: end the child so its calls fail now instead of hanging.
      for (const line of err.completed) this.deliverLine(line);
      this.log.error('stdio.line_too_long', { pid: this.pid, error: err });
      this.exitInfo = `wrote a stdout line longer than the limit (${err.message})`;
      this.child.kill('SIGKILL');
      return;
    }
    for (const line of lines) this.deliverLine(line);
  }

  private deliverLine(line: string): void {
    let msg: unknown;
    try {
      msg = parseJsonRpc(line);
    } catch {
      // digest §3: stdout should carry only MCP messages; tolerate stray output.
      this.log.warn('stdio.non_json_stdout', { pid: this.pid, line: line.slice(0, 200) });
      return;
    }
    if (this.messageListener) this.messageListener(msg);
    else this.early.push(msg);
  }

  private wireStderr(): void {
    const { stderr } = this.child;
    if ((this.opts.stderr ?? 'inherit-prefixed') === 'discard') {
      stderr.resume();
      return;
    }
    const prefix = `[${this.label()}] `;
    let partial = '';
    stderr.setEncoding('utf8');
    stderr.on('data', (text: string) => {
      const parts = (partial + text).split('\n');
      partial = parts.pop() ?? '';
      if (partial.length > MAX_STDERR_LINE) {
        parts.push(partial);
        partial = '';
      }
      for (const p of parts) if (p.trim() !== '') process.stderr.write(prefix + p.replace(/\r$/, '') + '\n');
    });
    stderr.on('end', () => {
      if (partial.trim() !== '') process.stderr.write(prefix + partial + '\n');
      partial = '';
    });
  }

  private finish(reason: string): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    this.resolveExit();
    this.flush();
    const listeners = this.closeListeners.splice(0);
    for (const l of listeners) l(reason);
  }
}
