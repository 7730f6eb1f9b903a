/** Wire codecs: framing, SSE, and 2026 HTTP header encoding. Imports nothing else of the project. */
export { LineBuffer, LineTooLongError } from './line-buffer.js';
export { SseParser, type SseEvent } from './sse-parser.js';
export { SSE_HEARTBEAT, SSE_RESPONSE_HEADERS, sseEvent, sseMessage, ssePriming } from './sse-writer.js';
export { decodeHeaderValue, encodeHeaderValue, hasInvalidHeaderChars, needsBase64 } from './header-value.js';
export {
  PARAM_HEADER_PREFIX,
  checkParamHeaders,
  paramHeaderSpecs,
  paramHeadersFor,
  type HeaderProblem,
  type ParamHeaderSpec,
} from './param-headers.js';
export { checkStandardHeaders, mcpNameFor, modernRequestHeaders } from './modern-headers.js';
