/**
 * Which downstream session subscribed to which resource URI, grouped by pool key.
 * Many downstream sessions share one upstream session per key, so the upstream
 * sees one `resources/subscribe` per (key, uri) and the bridge counts references
 * (DESIGN "Hard parts": per-session state the upstream would mix up).
 */
export class SubscriptionTable {
  /** key → uri → subscribed session ids. */
  readonly #byKey = new Map<string, Map<string, Set<string>>>();
  /** session id → its key and uris, for removal on close. */
  readonly #bySession = new Map<string, { key: string; uris: Set<string> }>();

  /**
   * Records a subscription. `first` says the key had no subscriber for `uri` yet
   * (the caller subscribes upstream); `added` is false when the session already had it.
   */
  add(key: string, sessionId: string, uri: string): { added: boolean; first: boolean } {
    const mine = this.#sessionEntry(key, sessionId);
    if (mine.uris.has(uri)) return { added: false, first: false };
    const uris = this.#byKey.get(key) ?? new Map<string, Set<string>>();
    this.#byKey.set(key, uris);
    const subs = uris.get(uri) ?? new Set<string>();
    uris.set(uri, subs);
    const first = subs.size === 0;
    subs.add(sessionId);
    mine.uris.add(uri);
    return { added: true, first };
  }

  /** Removes one subscription. `last` says no session on the key wants `uri` any more (unsubscribe upstream). */
  remove(sessionId: string, uri: string): { removed: boolean; last: boolean } {
    const mine = this.#bySession.get(sessionId);
    if (!mine || !mine.uris.delete(uri)) return { removed: false, last: false };
    const uris = this.#byKey.get(mine.key)!;
    const subs = uris.get(uri)!;
    subs.delete(sessionId);
    const last = subs.size === 0;
    if (last) uris.delete(uri);
    if (uris.size === 0) this.#byKey.delete(mine.key);
    if (mine.uris.size === 0) this.#bySession.delete(sessionId);
    return { removed: true, last };
  }

  has(sessionId: string, uri: string): boolean {
    return this.#bySession.get(sessionId)?.uris.has(uri) ?? false;
  }

  /** How many sessions on `key` subscribed to `uri`. */
  count(key: string, uri: string): number {
    return this.#byKey.get(key)?.get(uri)?.size ?? 0;
  }

  /** Every uri somebody on `key` subscribed to. */
  urisOn(key: string): string[] {
    return [...(this.#byKey.get(key)?.keys() ?? [])];
  }

  /** The uris one session subscribed to. */
  urisOf(sessionId: string): string[] {
    return [...(this.#bySession.get(sessionId)?.uris ?? [])];
  }

  #sessionEntry(key: string, sessionId: string): { key: string; uris: Set<string> } {
    let entry = this.#bySession.get(sessionId);
    if (!entry) {
      entry = { key, uris: new Set() };
      this.#bySession.set(sessionId, entry);
    } else if (entry.key !== key) {
      throw new Error(`session ${sessionId} is on key ${entry.key}, not ${key}`);
    }
    return entry;
  }
}
