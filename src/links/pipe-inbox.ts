import { parseJsonRpc } from '../jsonrpc/id-codec.js';
import type { Logger } from '../log.js';

/**
 * The receiving half every network MessagePipe shares: parses JSON text,
 * holds messages that arrive before a listener is set, and fires close
 * listeners exactly once.
 */
export class PipeInbox {
  private listener: ((msg: unknown) => void) | undefined;
  private readonly early: unknown[] = [];
  private readonly closeListeners: Array<(reason: string) => void> = [];
  private reason: string | undefined;

  constructor(
    private readonly log: Logger,
    private readonly label: string,
  ) {}

  /** Why the pipe closed, once it has. */
  get closeReason(): string | undefined {
    return this.reason;
  }

  onMessage(listener: (msg: unknown) => void): void {
    this.listener = listener;
    for (const m of this.early.splice(0)) listener(m);
  }

  onClose(listener: (reason: string) => void): void {
    const reason = this.reason;
    if (reason !== undefined) queueMicrotask(() => listener(reason));
    else this.closeListeners.push(listener);
  }

  /** One text frame or event from the server; non-JSON is logged and skipped. */
  receive(text: string | undefined): void {
    let msg: unknown;
    try {
      if (text === undefined) throw new Error('binary frame');
      msg = parseJsonRpc(text);
    } catch {
      this.log.warn(`upstream.${this.label}.not_json`, { length: text?.length });
      return;
    }
    if (this.listener) this.listener(msg);
    else this.early.push(msg);
  }

  /** Marks the pipe closed; returns false if it already was. */
  finish(reason: string): boolean {
    if (this.reason !== undefined) return false;
    this.reason = reason;
    this.log.debug(`upstream.${this.label}.closed`, { reason });
    for (const l of this.closeListeners.splice(0)) l(reason);
    return true;
  }
}
