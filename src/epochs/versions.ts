/**
 * The protocol epochs and versions the bridge knows (digest §1.1, §4). Every
 * version comparison in the project goes through this module.
 */
export const EPOCHS = ['modern', 'initialize', 'http+sse'] as const;
export type Epoch = (typeof EPOCHS)[number];

/** Newest first. */
export const MODERN_VERSIONS = ['2026-07-28'] as const;
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

export type ModernVersion = (typeof MODERN_VERSIONS)[number];
export type LegacyVersion = (typeof LEGACY_VERSIONS)[number];

export const LATEST_MODERN_VERSION: ModernVersion = MODERN_VERSIONS[0];
export const LATEST_LEGACY_VERSION: LegacyVersion = LEGACY_VERSIONS[0];
/** What a 2025-06-18+ server assumes when `MCP-Protocol-Version` is missing (digest §2.4, §4.3). */
export const DEFAULT_NEGOTIATED_VERSION: LegacyVersion = '2025-03-26';

/** The spec's lexicographic test: dates sort as strings. */
export function isModernVersion(v: string): boolean {
  return v >= LATEST_MODERN_VERSION;
}

export function isSupportedModernVersion(v: string): v is ModernVersion {
  return (MODERN_VERSIONS as readonly string[]).includes(v);
}

export function isSupportedLegacyVersion(v: string): v is LegacyVersion {
  return (LEGACY_VERSIONS as readonly string[]).includes(v);
}

/** Legacy negotiation: echo the client's version when supported, else offer the newest. */
export function negotiateLegacyVersion(requested: unknown): LegacyVersion {
  return typeof requested === 'string' && isSupportedLegacyVersion(requested) ? requested : LATEST_LEGACY_VERSION;
}

/** Feature gates by legacy revision (digest §4.4, §5.9). */
export const LEGACY_FEATURES = {
  batching: (v: string) => v === '2025-03-26',
  protocolVersionHeader: (v: string) => v >= '2025-06-18',
  elicitation: (v: string) => v >= '2025-06-18',
  urlElicitation: (v: string) => v >= '2025-11-25',
  samplingTools: (v: string) => v >= '2025-11-25',
  /** SSE priming events (id + empty data) and `retry` (SEP-1699, digest §4.3 table). */
  ssePriming: (v: string) => v >= '2025-11-25',
} as const;
