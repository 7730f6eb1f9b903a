/** JSON-RPC error codes used on the wire, by epoch (digest §1.10, §4, §6). */
export const RpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Implementation-defined; the SDKs use it for transport-level refusals. */
  ServerError: -32000,
  /** SDK v1/v2 "Session not found" on Streamable HTTP. */
  SessionNotFound: -32001,
  /** Retired in 2026 (resource not found); rewritten to -32602 toward modern clients. */
  LegacyResourceNotFound: -32002,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
  /** 2025-11-25 only: URL elicitation required. */
  UrlElicitationRequired: -32042,
  /** Request cancelled by the client (SDK convention). */
  RequestCancelled: -32800,
} as const;

export type RpcCodeName = keyof typeof RpcCode;
