import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import type { LegacyRequestContext, LegacySessionHandler } from '../../src/contracts/downstream.js';

/**
 * A session kept in its bridge's set until it closes. A class rather than an
 * object of three closures: every idle session holds one (issue 17, memory
 * per idle session).
 */
export class TrackedSession implements LegacySessionHandler {
  constructor(
    private readonly inner: LegacySessionHandler,
    private readonly sessions: Set<LegacySessionHandler>,
  ) {
    sessions.add(this);
  }

  handleRequest(req: JSONRPCRequest, ctx: LegacyRequestContext): Promise<JSONRPCResponse> {
    return this.inner.handleRequest(req, ctx);
  }

  handleNotification(n: JSONRPCNotification): void {
    this.inner.handleNotification(n);
  }

  async close(): Promise<void> {
    this.sessions.delete(this);
    await this.inner.close();
  }
}
