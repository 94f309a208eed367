import { KubeConfig } from '@kubernetes/client-node';
import type { ReviewResult, TokenReviewer } from '../pkg/broker/auth/index.ts';
import { ReviewerUnavailable } from '../pkg/broker/auth/index.ts';
import { createClient } from '../pkg/kube/client/index.ts';
import { kindRef, Scheme } from '../pkg/kube/kinds.ts';

interface TokenReview {
  apiVersion: string;
  kind: string;
  metadata?: Record<string, never>;
  spec: { token: string; audiences: string[] };
  status?: {
    authenticated?: boolean;
    user?: { username?: string };
    audiences?: string[];
    error?: string;
  };
}

// Create-only and cluster-scoped: the broker's ClusterRole grants `create tokenreviews`, nothing else.
const TokenReviewRef = kindRef<TokenReview>({
  group: 'authentication.k8s.io',
  version: 'v1',
  kind: 'TokenReview',
  plural: 'tokenreviews',
  namespaced: false,
});

/** The broker's TokenReviewer: a TokenReview created with the broker's own service account. */
export function kubeTokenReviewer(kc: KubeConfig): TokenReviewer {
  const client = createClient({ kc, scheme: new Scheme([TokenReviewRef]), userAgent: 'berth-broker' });
  return {
    async review(token, audiences): Promise<ReviewResult> {
      let answer: TokenReview;
      try {
        answer = await client.create(TokenReviewRef, {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token, audiences },
        });
      } catch (err) {
        // Never the token: only what failed (a KubeError's message is the API server's Status).
        throw new ReviewerUnavailable(
          `TokenReview failed: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      const s = answer.status ?? {};
      return {
        authenticated: s.authenticated === true,
        username: s.user?.username,
        audiences: s.audiences,
        error: s.error,
      };
    },
  };
}

/**
 * The reviewer with the pod's own service account, or KUBECONFIG outside a cluster (KUBECONFIG, else
 * ~/.kube/config, else in-cluster). cmd/broker.ts imports this module at the first review only.
 */
export function defaultKubeTokenReviewer(): TokenReviewer {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kubeTokenReviewer(kc);
}
