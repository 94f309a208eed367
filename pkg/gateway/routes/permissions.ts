/**
 * `GET /v1/namespaces/{ns}/permissions`: what the dashboard may offer — per kind, whether create,
 * update and delete would be allowed. `/v1` acts as the API service's own account (docs/api.md),
 * so the answer is that account's: SelfSubjectAccessReviews asked of the API server, kept 30 s per
 * namespace. Fail-closed like the marketplace probe: a review that fails answers false. The API
 * still decides every write; this only spares the user controls that would be refused.
 */
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { GROUP } from '../../api/index.ts';
import { type AnyOpenAPIHono, route } from '../../http/index.ts';
import { CoreKinds, type SelfSubjectAccessReview } from '../../kube/kinds.ts';
import type { GatewayDeps } from '../deps.ts';
import { errorResponses, nsParams } from './resource-schemas.ts';

/** The kinds the dashboard writes, by the plural its paths use. */
export const PROBED = [
  'agents',
  'teams',
  'models',
  'tools',
  'memories',
  'queries',
  'evaluators',
  'evaluations',
];
const VERBS = ['create', 'update', 'delete'] as const;
const TTL_MS = 30_000;
const MAX_NAMESPACES = 256;

const verbs = z.object({ create: z.boolean(), update: z.boolean(), delete: z.boolean() });
export const permissionsResponse = z.object({
  namespace: z.string(),
  resources: z.record(z.string(), verbs),
  /** Deciding a Query's pending approvals (issue 30) updates the Query's status. */
  approve: z.boolean(),
});
type Permissions = z.infer<typeof permissionsResponse>;

export function mountPermissionRoutes(app: AnyOpenAPIHono, deps: GatewayDeps) {
  const answers = new Map<string, { at: number; value: Promise<Permissions> }>();

  const allowed = async (namespace: string, verb: string, resource: string, subresource?: string) => {
    try {
      const review = await deps.client.create(CoreKinds.SelfSubjectAccessReview, {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { namespace, verb, group: GROUP, resource, subresource } },
      } as SelfSubjectAccessReview);
      return review.status?.allowed === true;
    } catch (err) {
      deps.logger.warn({ err, namespace, verb, resource }, 'permissions probe failed; answering false');
      return false;
    }
  };

  const ask = async (namespace: string): Promise<Permissions> => {
    const entries = await Promise.all(
      PROBED.map(async (plural) => {
        const answers = await Promise.all(VERBS.map((v) => allowed(namespace, v, plural)));
        return [plural, Object.fromEntries(VERBS.map((v, i) => [v, answers[i] as boolean]))] as const;
      }),
    );
    const approve = await allowed(namespace, 'patch', 'queries', 'status');
    return { namespace, resources: Object.fromEntries(entries) as Permissions['resources'], approve };
  };

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/namespaces/{namespace}/permissions',
      tags: ['Permissions'],
      summary: 'What this API would allow: create, update, delete per kind (fail-closed, cached 30 s)',
      request: { params: nsParams },
      responses: {
        200: { description: 'The probe', content: { 'application/json': { schema: permissionsResponse } } },
        400: errorResponses[400],
      },
    }),
    async (c) => {
      const { namespace } = c.req.valid('param');
      const now = Date.now();
      let hit = answers.get(namespace);
      if (!hit || now - hit.at > TTL_MS) {
        if (answers.size >= MAX_NAMESPACES) answers.clear();
        hit = { at: now, value: ask(namespace) };
        answers.set(namespace, hit);
      }
      return c.json(await hit.value, 200);
    },
  );
}
