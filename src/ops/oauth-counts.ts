import type { OAuthFailureReason, OAuthObserver, RefreshOutcome } from '../links/oauth/oauth-observer.js';

/**
 * The OAuth client's events as plain counts, read by the metrics at scrape
 * time. It exists before the upstream is probed (the probe may already
 * refresh or fail), while the metrics are built after.
 */
export class OAuthCounts implements OAuthObserver {
  readonly refreshes = new Map<RefreshOutcome, number>();
  readonly failures = new Map<OAuthFailureReason, number>();

  refreshed(outcome: RefreshOutcome): void {
    this.refreshes.set(outcome, (this.refreshes.get(outcome) ?? 0) + 1);
  }

  failed(reason: OAuthFailureReason): void {
    this.failures.set(reason, (this.failures.get(reason) ?? 0) + 1);
  }
}
