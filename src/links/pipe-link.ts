import type { LegacyLink, LegacyUpstreamSession, UpstreamInit } from '../contracts/upstream.js';
import { DEFAULT_OPTIONS } from '../daemon/options.js';
import { BridgeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { MessagePipe } from './message-pipe.js';
import { openPipeSession } from './pipe-session.js';

/**
 * A `LegacyLink` whose every session is one fresh pipe (an http+sse stream, a
 * WebSocket) carrying a `PipeSession`. Subclasses only say how to connect.
 */
export abstract class PipeLink implements LegacyLink {
  abstract readonly kind: 'http+sse' | 'ws';
  private readonly sessions = new Set<LegacyUpstreamSession>();
  private closing = false;

  protected constructor(
    protected readonly log: Logger,
    private readonly callTimeoutMs: number | undefined,
  ) {}

  /** Opens one connection to the server; `headers` (a pass-through client's) join the configured ones. */
  protected abstract connect(headers?: Readonly<Record<string, string>>): Promise<MessagePipe>;

  async openSession(init: UpstreamInit): Promise<LegacyUpstreamSession> {
    if (this.closing) throw new BridgeError('BRIDGE_ERR_CLOSED', `the ${this.kind} link is closed`);
    const pipe = await this.connect(init.headers);
    const session = await openPipeSession(pipe, init, {
      logger: this.log,
      callTimeoutMs: this.callTimeoutMs ?? DEFAULT_OPTIONS.callTimeoutMs,
      kind: this.kind,
    });
    if (this.closing) {
      await session.close();
      throw new BridgeError('BRIDGE_ERR_CLOSED', `the ${this.kind} link closed while the session opened`);
    }
    this.sessions.add(session);
    session.onClose(() => this.sessions.delete(session));
    return session;
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.sessions].map((s) => s.close()));
    this.sessions.clear();
  }
}
