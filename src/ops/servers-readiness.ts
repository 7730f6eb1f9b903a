import type { ReadinessCheck, ReadinessState } from './readiness.js';

/** The part of a server's status (`GET /servers`) readiness reads. */
export interface ServerReadinessView {
  name: string;
  state: string;
  error?: string;
}

/**
 * `/readyz` of a config-file daemon (issue 14): ready once every server of the
 * file is `ready`; otherwise 503 naming each server that is not and why, so a
 * person or a probe sees which one holds the daemon back. Draining wins.
 */
export class ServersReadiness implements ReadinessCheck {
  constructor(
    private readonly servers: () => ServerReadinessView[],
    private readonly draining: () => boolean,
  ) {}

  async check(): Promise<ReadinessState> {
    if (this.draining()) return { ready: false, reason: 'draining', detail: 'mcp-bridge is shutting down' };
    const all = this.servers();
    const waiting = all.filter((s) => s.state !== 'ready');
    if (waiting.length === 0) return { ready: true };
    const which = waiting.map((s) => `${s.name}: ${s.state}${s.error ? ` (${s.error})` : ''}`).join('; ');
    return { ready: false, reason: 'servers-not-ready', detail: `${all.length - waiting.length} of ${all.length} servers ready; ${which}` };
  }
}
