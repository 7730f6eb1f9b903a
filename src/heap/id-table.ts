/**
 * Entries keyed by request id (a JSON-RPC id, a wire id or a token) that come
 * and go on every call, in a dictionary-mode object. Not a JS Map, for the
 * reason LiveSet gives (live-set.ts): a churning Map chains its old tables
 * and, once one is in the old generation, keeps every later call alive past
 * each scavenge. A dictionary drops a deleted entry in place and keeps no link
 * to the table that replaces it.
 *
 * Keys are typed: the number 1 and the string "1" are different ids (JSON-RPC
 * tells them apart), and no key can name an array index or `__proto__`.
 * Iteration is in insertion order, as a Map's (every key is a string that is
 * no array index, and those an object lists in the order they were created).
 */
export class IdTable<K extends string | number | bigint, V> implements Iterable<[K, V]> {
  #entries: Record<string, V> = IdTable.#dictionary();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(key: K): V | undefined {
    return this.#entries[slotKey(key)];
  }

  has(key: K): boolean {
    return Object.hasOwn(this.#entries, slotKey(key));
  }

  set(key: K, value: V): this {
    const k = slotKey(key);
    if (!Object.hasOwn(this.#entries, k)) this.#size++;
    this.#entries[k] = value;
    return this;
  }

  delete(key: K): boolean {
    const k = slotKey(key);
    if (!Object.hasOwn(this.#entries, k)) return false;
    delete this.#entries[k];
    this.#size--;
    return true;
  }

  clear(): void {
    this.#entries = IdTable.#dictionary();
    this.#size = 0;
  }

  /** The values now, as a copy: safe while entries leave. */
  values(): V[] {
    const out: V[] = [];
    for (const k in this.#entries) out.push(this.#entries[k]);
    return out;
  }

  /** The entries now, as a copy. */
  entries(): Array<[K, V]> {
    const out: Array<[K, V]> = [];
    for (const k in this.#entries) out.push([idOf(k) as K, this.#entries[k]]);
    return out;
  }

  /** The keys now, as a copy. */
  keys(): K[] {
    const out: K[] = [];
    for (const k in this.#entries) out.push(idOf(k) as K);
    return out;
  }

  /** As a Map: `[key, value]` pairs (of a copy taken now). */
  [Symbol.iterator](): Iterator<[K, V]> {
    return this.entries()[Symbol.iterator]();
  }

  /**
   * A prototype-less object put in dictionary mode at once (deleting a
   * property that is not the last added does that, for good): in fast mode each
   * new key would cost a hidden class of its own, allocated in the old space.
   */
  static #dictionary<V>(): Record<string, V> {
    const o = Object.create(null) as Record<string, V>;
    o.a = undefined as V;
    o.b = undefined as V;
    delete o.a;
    delete o.b;
    return o;
  }
}

/** `n:` + a number, `b:` + a bigint (an id past 2^53), `s:` + a string. */
function slotKey(key: string | number | bigint): string {
  return typeof key === 'string' ? `s:${key}` : typeof key === 'number' ? `n:${key}` : `b:${key}`;
}

function idOf(k: string): string | number | bigint {
  const rest = k.slice(2);
  return k[0] === 's' ? rest : k[0] === 'n' ? Number(rest) : BigInt(rest);
}
