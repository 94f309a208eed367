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

/**
 * A TokenReviewer built at its first review, not before: `load` (e.g. importing the Kubernetes client,
 * ~46 MB of RSS) runs once, concurrent first reviews share it, and a failed load rejects those reviews
 * with ReviewerUnavailable (503, as an unreachable API server) and is tried again at the next review.
 */
export function lazyTokenReviewer(load: () => Promise<TokenReviewer>): TokenReviewer {
  let loading: Promise<TokenReviewer> | undefined;
  return {
    async review(token, audiences) {
      loading ??= Promise.resolve()
        .then(load)
        .catch((err: unknown) => {
          loading = undefined;
          throw new ReviewerUnavailable(
            `the TokenReview client could not be loaded: ${err instanceof Error ? err.message : String(err)}`,
          );
        });
      return (await loading).review(token, audiences);
    },
  };
}
