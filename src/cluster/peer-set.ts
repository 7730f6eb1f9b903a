import { lookup } from 'node:dns/promises';
import type { Logger } from '../log.js';
import type { ClusterKeys } from './cluster-keys.js';

export interface PeerSetOptions {
  /** How peers reach this replica (`--cluster-self`); with `dns`, its scheme and port are every peer's. */
  self: string;
  /** `--cluster-peers`: fixed base URLs (this replica's own may be among them). */
  peers?: string[];
  /** `--cluster-dns`: a name (a Kubernetes headless Service) whose addresses are the replicas. */
  dns?: string;
  /** How often `dns` is resolved again. */
  refreshMs?: number;
  keys: ClusterKeys;
  logger: Logger;
}

const DEFAULT_REFRESH_MS = 5_000;
/** An unknown owner tag triggers a lookup at most this often (a new replica may not be resolved yet). */
const MISS_REFRESH_MS = 1_000;

/** A base URL as every replica writes it: origin only, so `--cluster-self` and the peer list agree on tags. */
export function normalizePeerUrl(raw: string): string {
  const u = new URL(raw);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RangeError(`a cluster peer must be an http(s) URL (got '${raw}')`);
  return u.origin;
}

/**
 * The replicas this one knows, by owner tag. Static with `--cluster-peers`;
 * with `--cluster-dns` the name is resolved at start, then every `refreshMs`,
 * and again (rate-limited) when a request names a tag nobody holds.
 */
export class PeerSet {
  readonly self: string;
  readonly selfTag: string;
  #byTag = new Map<string, string>();
  #lastLookup = 0;
  #timer: NodeJS.Timeout | undefined;
  #next = 0;

  constructor(private readonly opts: PeerSetOptions) {
    this.self = normalizePeerUrl(opts.self);
    this.selfTag = opts.keys.tagOf(this.self);
    this.#set(opts.peers ?? []);
  }

  /** Resolves the DNS name once, then keeps it fresh; resolves at once for a static list. */
  async start(): Promise<void> {
    if (this.opts.dns === undefined) return;
    await this.refresh();
    this.#timer = setInterval(() => void this.refresh(), this.opts.refreshMs ?? DEFAULT_REFRESH_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** The base URL of the replica with this tag, looking the name up again first when it is unknown. */
  async urlOf(tag: string): Promise<string | undefined> {
    const known = this.#byTag.get(tag);
    if (known !== undefined || this.opts.dns === undefined || Date.now() - this.#lastLookup < MISS_REFRESH_MS) return known;
    await this.refresh();
    return this.#byTag.get(tag);
  }

  /** The other replicas in turn (round robin), for work a draining replica hands on. */
  others(): string[] {
    const all = [...this.#byTag.values()].filter((u) => u !== this.self);
    const start = all.length === 0 ? 0 : this.#next++ % all.length;
    return [...all.slice(start), ...all.slice(0, start)];
  }

  async refresh(): Promise<void> {
    const name = this.opts.dns;
    if (name === undefined) return;
    this.#lastLookup = Date.now();
    try {
      const addresses = await lookup(name, { all: true });
      const self = new URL(this.self);
      const port = self.port === '' ? '' : `:${self.port}`;
      this.#set(addresses.map((a) => `${self.protocol}//${a.family === 6 ? `[${a.address}]` : a.address}${port}`));
    } catch (err) {
      // Keep the last answer: a resolver hiccup must not make every peer look gone.
      this.opts.logger.warn('cluster.dns_failed', { name, err });
    }
  }

  #set(urls: string[]): void {
    const byTag = new Map<string, string>([[this.selfTag, this.self]]);
    for (const raw of urls) {
      const url = normalizePeerUrl(raw);
      byTag.set(this.opts.keys.tagOf(url), url);
    }
    this.#byTag = byTag;
  }
}
