import type { JSONRPCMessage } from '@modelcontextprotocol/server';

/**
 * A bidirectional JSON-RPC message channel with one peer: a stdio child's
 * stdin/stdout, an http+sse stream plus its POST endpoint, a WebSocket. Pipe
 * transports carry nothing that links a server request to the call that caused
 * it; `PipeSession` builds a legacy session on top of any of them.
 */
export interface MessagePipe {
  /** Writes one message (or a batch). Rejects when the pipe is closed or the write fails. */
  send(msg: JSONRPCMessage | JSONRPCMessage[]): Promise<void>;
  /** Parsed JSON values as they arrive (objects, or arrays for batches). One listener. */
  onMessage(listener: (msg: unknown) => void): void;
  /** Called once when the pipe ends for any reason (exit, stream drop, close()). */
  onClose(listener: (reason: string) => void): void;
  close(): Promise<void>;
  /**
   * False once the peer can take no more messages although onClose has not fired yet (a killed
   * child whose stdout is still draining): no new call should be given to it.
   */
  readonly writable?: boolean;
}
