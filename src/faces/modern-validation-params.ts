import { MODERN_METHODS } from './modern-methods.js';
import { anyObject, anyValue, arrayOf, bool, opt, record, req, shape, str, tagged, type Check, type ShapeProblem } from './params-shape.js';

/**
 * The params each served 2026-07-28 method must have (schema/2026-07-28/schema.ts),
 * checked by the face before anything goes upstream: a client that sends
 * `arguments: "x"` hears `-32602` naming `params.arguments` from the bridge, not
 * an upstream validator's dump. Only shapes are checked; names, URIs and
 * cursors the server alone can judge pass on. `_meta` is the envelope rung's.
 */

type Served = {
  [M in keyof typeof MODERN_METHODS]: (typeof MODERN_METHODS)[M]['status'] extends 'removed' ? never : M;
}[keyof typeof MODERN_METHODS];

/** `PaginatedRequestParams` (the same in every revision). */
export const paginated = shape({ cursor: opt(str) });

/**
 * `InputResponseRequestParams`: each `InputResponses` value is an ElicitResult,
 * CreateMessageResult or ListRootsResult, all objects; which one a key needs
 * only the server that minted the key knows.
 */
const mrtr = { inputResponses: opt(record(anyObject)), requestState: opt(str) };

/** `PromptReference | ResourceTemplateReference`. */
const completionRef = tagged('type', {
  'ref/prompt': shape({ name: req(str) }),
  'ref/resource': shape({ uri: req(str) }),
});

/** `CompleteRequestParams`; 2025-06-18 added `context`, which earlier clients never send, so one rule serves every revision. */
export const completeParams = shape({
  ref: req(completionRef),
  argument: req(shape({ name: req(str), value: req(str) })),
  context: opt(shape({ arguments: opt(record(str)) })),
});

/** Every served method; a method added to MODERN_METHODS is a compile error here until it has its rule. */
export const MODERN_PARAMS: Record<Served, Check> = {
  'server/discover': anyObject,
  'tools/list': paginated,
  'prompts/list': paginated,
  'resources/list': paginated,
  'resources/templates/list': paginated,
  'tools/call': shape({ name: req(str), arguments: opt(record(anyValue)), ...mrtr }),
  'prompts/get': shape({ name: req(str), arguments: opt(record(str)), ...mrtr }),
  'resources/read': shape({ uri: req(str), ...mrtr }),
  'completion/complete': completeParams,
  'subscriptions/listen': shape({
    notifications: req(
      shape({
        toolsListChanged: opt(bool),
        promptsListChanged: opt(bool),
        resourcesListChanged: opt(bool),
        resourceSubscriptions: opt(arrayOf(str)),
      }),
    ),
  }),
  // io.modelcontextprotocol/tasks (digest §1.12) is an extension outside the core schema: the upstream decides.
  'tasks/get': anyObject,
  'tasks/update': anyObject,
  'tasks/cancel': anyObject,
};

/** The first problem with `params` of a served `method`, or undefined when they fit (or the method has no rule). */
export function modernParamsProblem(method: string, params: unknown): ShapeProblem | undefined {
  if (!Object.hasOwn(MODERN_PARAMS, method)) return undefined;
  return MODERN_PARAMS[method as Served](params);
}
