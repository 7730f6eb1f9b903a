/** One event as it went out: its session-wide sequence number, the stream it belongs to and its frame. */
export interface StoredEvent<S> {
  readonly seq: number;
  readonly stream: S;
  /** The SSE frame, id included; '' for a priming event (nothing to replay). */
  readonly frame: string;
}

/** What `find` says about a sequence number. */
export type Lookup<S> = StoredEvent<S> | 'evicted' | 'unknown';

/**
 * The recent SSE events of one Streamable HTTP session, so a client that
 * reconnects with `Last-Event-ID` gets what it missed on that stream (2025-11-25
 * transports, Resumability and Redelivery). Bounded twice: `maxEvents`, and
 * `maxChars` of frames (one large result must not pin megabytes per session
 * for long); the oldest go first, the newest event always stays. Sequence
 * numbers are contiguous, so the events held are always the newest ones: an
 * event found means every later event of its stream is here too.
 */
export class EventStore<S> {
  #ring: Array<StoredEvent<S> | undefined> = [];
  /** Ring index of the oldest event. */
  #head = 0;
  #count = 0;
  #chars = 0;
  #next = 1;

  constructor(
    private readonly maxEvents: number,
    private readonly maxChars: number,
  ) {
    if (!(maxEvents >= 1)) throw new RangeError('an event store holds at least one event');
  }

  /** Events held now. */
  get size(): number {
    return this.#count;
  }

  /** Characters of frames held now. */
  get chars(): number {
    return this.#chars;
  }

  /**
   * Stores the next event; `frameFor` builds its frame from its sequence number.
   * Returns the frame. An event that is not `replayable` (a priming event) is
   * kept as its id alone: a resume may start from it, but it is never sent again.
   */
  add(stream: S, frameFor: (seq: number) => string, replayable = true): string {
    const seq = this.#next++;
    const frame = frameFor(seq);
    const kept = replayable ? frame : '';
    if (this.#count === this.maxEvents) this.#evict();
    if (this.#count === this.#ring.length) this.#grow();
    this.#ring[(this.#head + this.#count) % this.#ring.length] = { seq, stream, frame: kept };
    this.#count++;
    this.#chars += kept.length;
    while (this.#chars > this.maxChars && this.#count > 1) this.#evict();
    return frame;
  }

  /** The event with this sequence number; 'evicted' when it is older than the store, 'unknown' when never issued. */
  find(seq: number): Lookup<S> {
    if (!Number.isSafeInteger(seq) || seq < 1 || seq >= this.#next) return 'unknown';
    const oldest = this.#next - this.#count;
    if (seq < oldest) return 'evicted';
    return this.#ring[(this.#head + seq - oldest) % this.#ring.length]!;
  }

  /** The frames of `stream` after `seq`, oldest first: what a resume replays. */
  after(seq: number, stream: S): string[] {
    const out: string[] = [];
    const oldest = this.#next - this.#count;
    for (let i = Math.max(seq + 1, oldest) - oldest; i < this.#count; i++) {
      const e = this.#ring[(this.#head + i) % this.#ring.length]!;
      if (e.stream === stream && e.frame !== '') out.push(e.frame);
    }
    return out;
  }

  #evict(): void {
    const e = this.#ring[this.#head]!;
    this.#ring[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.#ring.length;
    this.#count--;
    this.#chars -= e.frame.length;
  }

  /** Doubles the ring (up to maxEvents): a session that stores a few events holds a small array. */
  #grow(): void {
    const size = Math.min(Math.max(8, this.#ring.length * 2), this.maxEvents);
    const ring = new Array<StoredEvent<S> | undefined>(size);
    for (let i = 0; i < this.#count; i++) ring[i] = this.#ring[(this.#head + i) % this.#ring.length];
    this.#ring = ring;
    this.#head = 0;
  }
}
