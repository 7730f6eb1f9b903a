// A per-session, in-memory EventStore for SDK v1's Streamable HTTP transport,
// so a client that reconnects with Last-Event-ID gets what it missed (SEP-1699).

export class MemoryEventStore {
  #events = []; // [{ id, streamId, message }] in arrival order
  #next = 0;

  async storeEvent(streamId, message) {
    const id = `${streamId}.${++this.#next}`;
    this.#events.push({ id, streamId, message });
    return id;
  }

  async getStreamIdForEventId(eventId) {
    return this.#events.find((e) => e.id === eventId)?.streamId;
  }

  async replayEventsAfter(lastEventId, { send }) {
    const at = this.#events.findIndex((e) => e.id === lastEventId);
    if (at < 0) throw new Error(`unknown event id ${lastEventId}`);
    const { streamId } = this.#events[at];
    for (const e of this.#events.slice(at + 1)) if (e.streamId === streamId) await send(e.id, e.message);
    return streamId;
  }
}
