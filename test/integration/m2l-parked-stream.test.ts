import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { ExchangeRecorder, type RecordedExchange } from '../helpers/exchange-recorder.js';
import { modernPost, readMessages } from '../helpers/faults.js';
import { startEverything, type RunningServer } from '../helpers/processes.js';
import { startV1SessionServer, type V1SessionServer } from '../helpers/v1-session-server.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * Issue 17, a parked MRTR call's memory: in front of a Streamable HTTP server
 * that can replay a stream (server-everything keeps an event store), a call
 * parked on `input_required` lets go of its upstream POST stream, and the
 * client's retry gets the result through GET + Last-Event-ID once the answer
 * is posted. A recording proxy between the bridge and the server shows which
 * exchanges are open at each step.
 */

type Obj = Record<string, any>;
const CAPS = { elicitation: {} };
let nextId = 1;

async function callTool(bridge: RunningCli, params: Obj): Promise<Obj> {
  const id = nextId++;
  const res = await modernPost(bridge.url, id, 'tools/call', { name: 'trigger-elicitation-request', arguments: {}, ...params, _meta: { 'io.modelcontextprotocol/clientCapabilities': CAPS } });
  const reply = (await readMessages(res)).find((m) => m.id === id) as Obj | undefined;
  if (!reply) throw new Error(`no answer to tools/call (HTTP ${res.status})`);
  return reply;
}

const toolCall = (x: RecordedExchange) => x.method === 'POST' && x.rpc === 'tools/call';
const resumed = (x: RecordedExchange) => x.method === 'GET' && x.lastEventId !== undefined;

/** server-everything (Streamable HTTP) ← recording proxy ← the built bridge with `args`, for one describe block. */
function throughRecorder(args: string[] = []): () => { recorder: ExchangeRecorder; bridge: RunningCli } {
  let upstream: RunningServer | undefined;
  let recorder: ExchangeRecorder | undefined;
  let bridge: RunningCli | undefined;
  beforeAll(async () => {
    upstream = await startEverything('streamableHttp');
    recorder = await ExchangeRecorder.start(upstream.url);
    bridge = await startCli(['--upstream', `${recorder.url}/mcp`, '--log-level', 'warn', ...args]);
  });
  afterAll(async () => {
    await bridge?.close();
    await recorder?.close();
    await upstream?.close();
  });
  return () => ({ recorder: recorder!, bridge: bridge! });
}

describe('a parked m2l call over Streamable HTTP holds no upstream stream', () => {
  const ctx = throughRecorder();

  it('input_required closes the call’s POST stream; the retry resumes it with Last-Event-ID and gets the result', async () => {
    const { recorder, bridge } = ctx();
    const first = await callTool(bridge, {});
    expect(first.result.resultType).toBe('input_required');
    const [key] = Object.keys(first.result.inputRequests);
    expect(first.result.inputRequests[key!].method).toBe('elicitation/create');

    // The tools/call POST went out and is closed while the call is parked; nothing resumed it yet.
    await waitFor(() => recorder.exchanges.some(toolCall) && recorder.open(toolCall).length === 0, 10_000, 'the parked call’s POST stream closed');
    expect(recorder.exchanges.filter(resumed)).toEqual([]);

    const done = await callTool(bridge, { inputResponses: { [key!]: { action: 'accept', content: { name: 'Ada Lovelace' } } }, requestState: first.result.requestState });
    expect(done.result.resultType).toBe('complete');
    expect(JSON.stringify(done.result.content)).toContain('Name: Ada Lovelace');

    // The answer was posted, then the stream resumed from the last event the bridge had read.
    const answerAt = recorder.exchanges.findIndex((x) => x.method === 'POST' && x.rpc === 'response');
    const resumeAt = recorder.exchanges.findIndex(resumed);
    expect(answerAt).toBeGreaterThanOrEqual(0);
    expect(resumeAt).toBeGreaterThan(answerAt);
    expect(recorder.exchanges[resumeAt].status).toBe(200);
    // Once answered, the bridge leaves the resumed stream too.
    await waitFor(() => recorder.open(resumed).length === 0, 10_000, 'the resumed stream closed after the result');
  });

  it('a call parked twice in a row (a retry without its answer) still completes, and holds no stream meanwhile', async () => {
    const { recorder, bridge } = ctx();
    const first = await callTool(bridge, {});
    const [key] = Object.keys(first.result.inputRequests);
    const again = await callTool(bridge, { inputResponses: {}, requestState: first.result.requestState });
    expect(again.result.resultType).toBe('input_required');
    expect(Object.keys(again.result.inputRequests)).toEqual([key]);
    await waitFor(() => recorder.open(toolCall).length === 0 && recorder.open(resumed).length === 0, 10_000, 'no stream of the parked call open');
    const done = await callTool(bridge, { inputResponses: { [key!]: { action: 'accept', content: { name: 'Grace Hopper' } } }, requestState: again.result.requestState });
    expect(done.result.resultType).toBe('complete');
    expect(JSON.stringify(done.result.content)).toContain('Name: Grace Hopper');
  });
});

describe('a released parked call that expires', () => {
  const ctx = throughRecorder(['--request-state-ttl', '1500', '--debug-stats']);

  it('is cancelled upstream at its TTL without being resumed, and the bridge goes on serving', async () => {
    const { recorder, bridge } = ctx();
    const parked = async () => ((await (await fetch(`${bridge.url}/debug/stats`)).json()) as Obj).parked as number;
    const first = await callTool(bridge, {});
    expect(first.result.resultType).toBe('input_required');
    await waitFor(() => recorder.exchanges.some(toolCall) && recorder.open(toolCall).length === 0, 10_000, 'the parked call’s POST stream closed');
    expect(await parked()).toBe(1);
    await waitFor(async () => (await parked()) === 0, 15_000, 'the parked call expiring');
    await waitFor(() => recorder.exchanges.some((x) => x.method === 'POST' && x.rpc === 'notifications/cancelled'), 10_000, 'notifications/cancelled posted upstream');
    expect(recorder.exchanges.filter(resumed)).toEqual([]);
    // A retry of the expired call is refused with -32602 naming the expiry; a fresh call parks and completes.
    const late = await callTool(bridge, { inputResponses: { x: { action: 'accept', content: {} } }, requestState: first.result.requestState });
    expect(late.error).toMatchObject({ code: -32602, data: { requestState: 'expired' } });
    const again = await callTool(bridge, {});
    const [key] = Object.keys(again.result.inputRequests);
    const done = await callTool(bridge, { inputResponses: { [key!]: { action: 'accept', content: { name: 'Hedy Lamarr' } } }, requestState: again.result.requestState });
    expect(JSON.stringify(done.result.content)).toContain('Name: Hedy Lamarr');
  });
});

describe('progress a server sends while its call is parked', () => {
  let server: V1SessionServer;
  let bridge: RunningCli;
  /** Resolved by the test once the first round reached the client: the tool then reports progress. */
  let parked!: () => void;
  let progressSent = false;
  beforeAll(async () => {
    server = await startV1SessionServer({
      name: 'progress-while-parked',
      transport: { eventStore: new InMemoryEventStore() },
      register(mcp) {
        mcp.registerTool('ask', { description: 'asks a name; reports progress while the question waits' }, async (extra) => {
          const token = extra._meta?.progressToken;
          const waiting = new Promise<void>((r) => (parked = r));
          void waiting.then(async () => {
            if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2, message: 'still waiting' } });
            progressSent = true;
          });
          const answer = await extra.sendRequest({ method: 'elicitation/create', params: { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } } }, ElicitResultSchema);
          return { content: [{ type: 'text', text: `Name: ${String(answer.content?.name)}` }] };
        });
      },
    });
    bridge = await startCli(['--upstream', server.url, '--log-level', 'warn']);
  });
  afterAll(async () => {
    await bridge?.close();
    await server?.close();
  });

  it('comes on the retry’s stream, under the retry’s token, before the result', async () => {
    const post = async (id: number, extra: Obj) => {
      const res = await modernPost(bridge.url, id, 'tools/call', { name: 'ask', arguments: {}, ...extra, _meta: { 'io.modelcontextprotocol/clientCapabilities': CAPS, progressToken: `tok-${id}` } });
      return readMessages(res);
    };
    const first = (await post(9001, {})).find((m) => m.id === 9001) as Obj;
    expect(first.result.resultType).toBe('input_required');
    parked();
    await waitFor(() => progressSent, 10_000, 'the server sending progress while the call is parked');
    const [key] = Object.keys(first.result.inputRequests);
    const messages = await post(9002, { inputResponses: { [key!]: { action: 'accept', content: { name: 'Margaret Hamilton' } } }, requestState: first.result.requestState });
    const progressAt = messages.findIndex((m) => m.method === 'notifications/progress');
    const resultAt = messages.findIndex((m) => m.id === 9002);
    expect(progressAt).toBeGreaterThanOrEqual(0);
    expect(progressAt).toBeLessThan(resultAt);
    expect(messages[progressAt]).toMatchObject({ params: { progressToken: 'tok-9002', progress: 1, total: 2, message: 'still waiting' } });
    expect(JSON.stringify((messages[resultAt] as Obj).result.content)).toContain('Name: Margaret Hamilton');
  });
});
