import { createRoute } from '@hono/zod-openapi';
import type { KubernetesObject } from '@kubernetes/client-node';
import { z } from 'zod';
import {
  API_VERSION,
  durationSchema,
  EVALUATION_TYPES,
  evaluationConfigSchema,
  evaluationKind,
  evaluationTypeIssues,
  evaluatorParametersSchema,
  refOf,
} from '../../api/index.ts';
import { type AnyOpenAPIHono, route } from '../../http/index.ts';
import type { GatewayDeps } from '../deps.ts';
import { settle } from '../reads.ts';
import { itemParams, objectResponse } from './resource-schemas.ts';
import { mountResourceRoutes, presentable } from './resources.ts';

const EVALUATION = refOf<KubernetesObject>(evaluationKind);

/**
 * The spec's evaluation create body, flat and not Kubernetes-shaped: `{name, type, evaluator.name,
 * config.input, config.output}` for a direct evaluation; `type: query` with `config.queryRef.name`,
 * `evaluator.parameters` and `timeout` are ours. What each type needs is checked with every other
 * issue (the `when` below), so one 400 lists them all.
 */
export const evaluationCreateBody = z
  .object({
    name: z.string().min(1).max(253),
    type: z.enum(EVALUATION_TYPES).default('direct'),
    evaluator: z.object({ name: z.string().min(1), parameters: evaluatorParametersSchema.optional() }),
    config: evaluationConfigSchema,
    timeout: durationSchema.optional(),
  })
  .check(
    z.superRefine(
      (body, ctx) => {
        for (const issue of evaluationTypeIssues(body)) ctx.addIssue({ code: 'custom', ...issue });
      },
      { when: () => true },
    ),
  );

export function mountEvaluationRoutes(app: AnyOpenAPIHono, deps: GatewayDeps) {
  mountResourceRoutes(app, deps, evaluationKind, {
    create: {
      body: evaluationCreateBody,
      toObject: (b) => ({
        apiVersion: API_VERSION,
        kind: 'Evaluation',
        metadata: { name: b.name },
        spec: {
          type: b.type,
          evaluator: b.evaluator,
          config: b.config,
          ...(b.timeout ? { timeout: b.timeout } : {}),
        },
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
