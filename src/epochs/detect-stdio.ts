import type { JSONRPCRequest } from '@modelcontextprotocol/server';
import type { UpstreamFacts } from '../contracts/upstream.js';
import { BridgeError } from '../errors.js';
import { isRequest, resultResponse } from '../jsonrpc/messages.js';
import type { Logger } from '../log.js';
import { StdioProcess } from '../links/stdio-process.js';
import { classifyDiscoverAnswer, classifyInitializeAnswer, type ProbeObservation } from './classify-probe.js';
import { discoverProbe, initializeProbe } from './probe-requests.js';
import { factsFromDiscover, factsFromInitialize } from './upstream-facts.js';
import { LATEST_MODERN_VERSION, MODERN_VERSIONS } from './versions.js';

export interface StdioProbeTarget {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
}

export interface DetectStdioOptions {
  logger: Logger;
  /** How long the discover probe waits (digest §3); default 3000. */
  timeoutMs?: number;
  epoch?: 'auto' | 'modern' | 'initialize';
}

const DEFAULT_DISCOVER_TIMEOUT_MS = 3_000;
/** A legacy server gets longer to start and answer initialize (package runners may download first). */
const INITIALIZE_TIMEOUT_MS = 20_000;
const SIBLING_GRACE_MS = 1_000;

type Observed = ProbeObservation & { closeReason?: string };

/** A disposable child for one probe ([SDK]: some legacy servers exit on a pre-initialize request, digest §3). */
class ProbeSibling {
  private readonly child: StdioProcess;
  private closeReason: string | undefined;
  private waiter: ((o: Observed) => void) | undefined;
  private waitingFor: unknown;

  constructor(target: StdioProbeTarget, logger: Logger) {
    this.child = StdioProcess.spawn({ ...target, logger, name: `${target.command} (probe)`, stderr: 'discard' });
    this.child.onMessage((msg) => {
      for (const m of Array.isArray(msg) ? msg : [msg]) {
        // A legacy server may ping before initialize completes (digest §4.1).
        if (isRequest(m) && m.method === 'ping') void this.child.send(resultResponse(m.id, {})).catch(() => undefined);
        else if ((m as { id?: unknown }).id === this.waitingFor && !isRequest(m)) this.waiter?.({ kind: 'stdio-reply', message: m });
      }
    });
    this.child.onClose((reason) => {
      this.closeReason = reason;
      this.waiter?.({ kind: 'closed', closeReason: reason });
    });
  }

  ask(req: JSONRPCRequest, timeoutMs: number): Promise<Observed> {
    if (this.closeReason !== undefined) return Promise.resolve({ kind: 'closed', closeReason: this.closeReason });
    return new Promise<Observed>((resolve) => {
      const timer = setTimeout(() => done({ kind: 'timeout' }), timeoutMs);
      const done = (o: Observed) => {
        clearTimeout(timer);
        this.waiter = undefined;
        resolve(o);
      };
      this.waitingFor = req.id;
      this.waiter = done;
      this.child.send(req).catch(() => undefined); // a dead child reports through onClose
    });
  }

  close(): Promise<void> {
    return this.child.close(SIBLING_GRACE_MS);
  }
}

function commandLine(t: StdioProbeTarget): string {
  return [t.command, ...t.args].join(' ');
}

/**
 * Detects a stdio server's epoch (digest §3): `server/discover` on a disposable
 * sibling, waiting `timeoutMs`; a DiscoverResult means modern, anything else
 * legacy, confirmed by `initialize` on a fresh sibling. Every sibling is closed.
 */
export async function detectStdio(target: StdioProbeTarget, opts: DetectStdioOptions): Promise<UpstreamFacts> {
  const log = opts.logger.child({ probe: target.command });
  const epoch = opts.epoch ?? 'auto';
  const discoverTimeout = opts.timeoutMs ?? DEFAULT_DISCOVER_TIMEOUT_MS;
  const closing: Promise<void>[] = [];
  let discoverSaw = '';
  try {
    if (epoch !== 'initialize') {
      const sibling = new ProbeSibling(target, opts.logger);
      try {
        let version: string = LATEST_MODERN_VERSION;
        for (let attempt = 1; attempt <= 2; attempt++) {
          const o = await sibling.ask(discoverProbe(`mcp-bridge-discover-probe-${attempt}`, version), discoverTimeout);
          const d = classifyDiscoverAnswer(o, MODERN_VERSIONS);
          log.debug('probe.stdio.discover', { attempt, verdict: d.verdict, evidence: d.evidence });
          discoverSaw = o.kind === 'timeout' ? `no answer to server/discover within ${discoverTimeout} ms` : d.evidence;
          if (d.verdict === 'modern') return factsFromDiscover(d.discover, 'stdio');
          if (d.verdict !== 'retry-modern') break;
          version = d.version;
        }
      } finally {
        closing.push(sibling.close());
      }
      if (epoch === 'modern') {
        throw new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', `stdio server '${commandLine(target)}' did not answer as a 2026-07-28 server (${discoverSaw})`);
      }
    }
    return await initializeOnSibling(target, opts.logger, discoverSaw, epoch === 'auto');
  } finally {
    await Promise.all(closing);
  }
}

/**
 * Detection's second look at a server that refused initialize naming a modern
 * version after its discover probe went unanswered: it is alive and modern, it
 * was only slow to start (a loaded machine, a cold package cache). It gets the
 * start-up allowance a legacy server gets.
 */
async function discoverAfterRefusal(target: StdioProbeTarget, logger: Logger, version: string): Promise<UpstreamFacts | undefined> {
  const sibling = new ProbeSibling(target, logger);
  try {
    const o = await sibling.ask(discoverProbe('mcp-bridge-discover-probe-again', version), INITIALIZE_TIMEOUT_MS);
    const d = classifyDiscoverAnswer(o, MODERN_VERSIONS);
    logger.debug('probe.stdio.discover', { attempt: 'after -32022', verdict: d.verdict, evidence: d.evidence });
    return d.verdict === 'modern' ? factsFromDiscover(d.discover, 'stdio') : undefined;
  } finally {
    await sibling.close();
  }
}

async function initializeOnSibling(target: StdioProbeTarget, logger: Logger, discoverSaw: string, auto: boolean): Promise<UpstreamFacts> {
  const sibling = new ProbeSibling(target, logger);
  try {
    const o = await sibling.ask(initializeProbe('mcp-bridge-initialize-probe'), INITIALIZE_TIMEOUT_MS);
    const d = classifyInitializeAnswer(o, 'stdio');
    logger.debug('probe.stdio.initialize', { verdict: d.verdict, evidence: d.evidence });
    if (d.verdict === 'initialize') return factsFromInitialize(d.initializeResult, 'initialize', 'stdio');
    const line = commandLine(target);
    if (d.verdict === 'retry-modern') {
      // A modern-only server answers initialize with -32022 and its versions (digest §2.4).
      const facts = auto ? await discoverAfterRefusal(target, logger, d.version) : undefined;
      if (facts) return facts;
      throw new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', `stdio server '${line}' is not an initialize-era server: it refused initialize (-32022) naming 2026-07-28-era version ${d.version}; use --upstream-epoch auto or modern`);
    }
    if (o.kind === 'closed') {
      const reason = o.closeReason ?? 'exited';
      throw new BridgeError(
        'BRIDGE_ERR_UPSTREAM_UNREACHABLE',
        reason.startsWith('failed to start') ? `cannot start stdio server '${line}': ${reason}` : `stdio server '${line}' ${reason} before answering initialize`,
      );
    }
    const before = discoverSaw ? `${discoverSaw}; ` : '';
    const saw = o.kind === 'timeout' ? `no answer to initialize within ${INITIALIZE_TIMEOUT_MS} ms` : `${d.evidence}`;
    throw new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', `stdio server '${line}' gave ${before}${saw}; it does not look like an MCP server`);
  } finally {
    await sibling.close();
  }
}
