// Multi round-trip serving for the modern fixture (SEP-2322): a handler names
// the rounds of inputs it needs; each call either has them all (answers are
// returned) or gets an `input_required` result asking for the next round's
// missing keys. Progress across rounds travels in a sealed requestState.
import { randomBytes } from 'node:crypto';
import { createRequestStateCodec, inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { INPUTS } from '../shared/surface.mjs';

/** One key per process: HTTP serves each request from a fresh instance, all sharing it. */
export const stateCodec = createRequestStateCodec({ key: randomBytes(32), ttlSeconds: 600 });

const KIND = { 'elicitation/create': 'elicit', 'sampling/createMessage': 'sampling', 'roots/list': 'roots' };

/** The bare answer for `key` in this request's inputResponses, when it has the right shape. */
function answerFor(responses, key) {
  const view = inputResponse(responses, key);
  if (view.kind !== KIND[INPUTS[key].method]) return undefined;
  if (view.kind === 'elicit') return { action: view.action, content: view.content };
  if (view.kind === 'sampling') return view.result;
  return { roots: view.roots };
}

/**
 * `{ answers }` once every round is answered, else `{ pending }`: the
 * `input_required` result to return. `rounds` is a list of key lists.
 */
export async function runRounds(ctx, rounds, tag) {
  const state = ctx.mcpReq.requestState();
  const carried = state && typeof state === 'object' && state.tag === tag ? state : { tag, round: 0, answers: {} };
  const answers = { ...carried.answers };
  let round = carried.round;
  while (round < rounds.length) {
    const missing = [];
    for (const key of rounds[round]) {
      const a = answers[key] ?? answerFor(ctx.mcpReq.inputResponses, key);
      if (a === undefined) missing.push(key);
      else answers[key] = a;
    }
    if (missing.length > 0) {
      const requestState = await stateCodec.mint({ tag, round, answers });
      const inputRequests = Object.fromEntries(missing.map((key) => [key, { method: INPUTS[key].method, params: INPUTS[key].params }]));
      return { pending: inputRequired({ inputRequests, requestState }) };
    }
    round += 1;
  }
  return { answers };
}
