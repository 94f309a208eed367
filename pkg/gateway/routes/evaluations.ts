import { createRoute } from '@hono/zod-openapi';
import type { KubernetesObject } from '@kubernetes/client-node';
import { z } from 'zod';
import { API_VERSION, evaluationKind, refOf } from '../../api/index.ts';
import { type AnyOpenAPIHono, route } from '../../http/index.ts';
import type { GatewayDeps } from '../deps.ts';
import { settle } from '../reads.ts';
import { itemParams, objectResponse } from './resource-schemas.ts';
import { mountResourceRoutes, presentable } from './resources.ts';

const EVALUATION = refOf<KubernetesObject>(evaluationKind);

/** The spec's evaluation create body: flat, not Kubernetes-shaped. */
export const evaluationCreateBody = z.object({
  name: z.string().min(1).max(253),
  type: z.enum(['direct']).default('direct'),
  evaluator: z.object({ name: z.string().min(1) }),
  config: z.object({ input: z.string(), output: z.string() }),
});

export function mountEvaluationRoutes(app: AnyOpenAPIHono, deps: GatewayDeps) {
  mountResourceRoutes(app, deps, evaluationKind, {
    create: {
      body: evaluationCreateBody,
      toObject: (b) => ({
        apiVersion: API_VERSION,
        kind: 'Evaluation',
        metadata: { name: b.name },
        spec: { type: b.type, evaluator: b.evaluator, config: b.config },
      }),
    },
  });

  route(
    app,
    createRoute({
      method: 'patch',
      path: '/v1/namespaces/{namespace}/evaluations/{name}/cancel',
      tags: ['Evaluation'],
      request: { params: itemParams },
      responses: {
        200: {
          description: 'Cancellation requested (spec.cancel = true); the Evaluation',
          content: { 'application/json': { schema: objectResponse } },
        },
        404: { description: 'Not found' },
      },
    }),
    async (c) => {
      const { namespace, name } = c.req.valid('param');
      const cancel = { type: 'merge' as const, patch: { spec: { cancel: true } } };
      const updated = await deps.client.patch(EVALUATION, { namespace, name }, cancel);
      await settle(deps, EVALUATION, namespace, updated);
      return c.json(presentable(updated), 200);
    },
  );
}
