/**
 * SSE event ids of a Streamable HTTP session: `<stream>-<seq>`. The 2025-11-25
 * transports page (Resumability and Redelivery) wants ids unique across the
 * session's streams and SHOULD encode the stream, so a `Last-Event-ID` names
 * the stream to resume. `seq` counts every event of the session, `stream`
 * numbers its streams (the GET stream and each POST's).
 */
export interface SseEventId {
  stream: number;
  seq: number;
}

const ID = /^(\d{1,15})-(\d{1,15})$/;

export function formatEventId(stream: number, seq: number): string {
  return `${stream}-${seq}`;
}

/** The parts of an id this module made; undefined for anything else. */
export function parseEventId(id: string): SseEventId | undefined {
  const m = ID.exec(id);
  return m ? { stream: Number(m[1]), seq: Number(m[2]) } : undefined;
}
