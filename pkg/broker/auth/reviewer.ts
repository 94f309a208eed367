/**
 * What the broker needs from Kubernetes to authenticate a caller, without importing pkg/kube (the
 * broker loads no Kubernetes client unless BROKER_AUTH=serviceaccount; cmd/ wires the real one).
 */

/** The audience every token sent to a broker carries (a token minted for the API server is refused). */
export const BROKER_AUDIENCE = 'berth-broker';

/** A TokenReview's verdict on one token. */
export interface ReviewResult {
  authenticated: boolean;
  /** `system:serviceaccount:<namespace>:<name>` for a service account. */
  username?: string;
  /** The audiences the API server found the token valid for (a subset of those asked). */
  audiences?: string[];
  /** Why the API server refused it (expired, wrong audience…): for the log, never the client. */
  error?: string;
}

/**
 * Asks the API server about a token (a TokenReview with `spec.audiences`). Resolves with the verdict;
 * rejects with ReviewerUnavailable when no verdict could be had (API server unreachable, 5xx, the
 * broker not allowed to create tokenreviews).
 */
export interface TokenReviewer {
  review(token: string, audiences: string[]): Promise<ReviewResult>;
}

export class ReviewerUnavailable extends Error {
  override name = 'ReviewerUnavailable';
}
