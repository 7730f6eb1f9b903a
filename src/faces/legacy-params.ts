import type { ClientRequest } from '@modelcontextprotocol/server';
import { completeParams, paginated } from './modern-validation-params.js';
import { anyValue, opt, record, req, shape, str, type Check, type ShapeProblem } from './params-shape.js';

/**
 * The params shapes of client requests from initialize-era sessions
 * (schema 2025-11-25 and earlier; these fields did not change across them),
 * checked by the legacy session driver before a request reaches any bridge:
 * a malformed `tools/call` is answered -32602 naming the field instead of
 * travelling to the upstream (a modern one through l2m, a legacy one through l2l).
 */

type LegacyMethod = ClientRequest['method'];

/** Every client method the SDK knows; one it adds is a compile error here until it has a rule. */
export const LEGACY_PARAMS: Record<LegacyMethod, Check> = {
  // Answered by the driver itself.
  initialize: anyValue,
  ping: anyValue,
  'tools/list': paginated,
  'prompts/list': paginated,
  'resources/list': paginated,
  'resources/templates/list': paginated,
  'tools/call': shape({ name: req(str), arguments: opt(record(anyValue)) }),
  'prompts/get': shape({ name: req(str), arguments: opt(record(str)) }),
  'resources/read': shape({ uri: req(str) }),
  'resources/subscribe': shape({ uri: req(str) }),
  'resources/unsubscribe': shape({ uri: req(str) }),
  // The value (one of the logging levels) is the bridge's to judge.
  'logging/setLevel': shape({ level: req(str) }),
  'completion/complete': completeParams,
  // Not legacy methods: the bridge behind decides.
  'server/discover': anyValue,
  'subscriptions/listen': anyValue,
};

/** The first problem with a legacy request's params (absent params read as `{}`), or undefined. */
export function legacyParamsProblem(method: string, params: unknown): ShapeProblem | undefined {
  if (!Object.hasOwn(LEGACY_PARAMS, method)) return undefined;
  return LEGACY_PARAMS[method as LegacyMethod](params ?? {});
}
