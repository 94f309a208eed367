/**
 * `POST /v1/namespaces/{ns}/queries/{name}/approvals`: a decision on a waiting Query (docs/approvals.md).
 * Recorded in `status.approvals` with a write conditional on the resourceVersion read, so of two
 * decisions on one approval exactly one wins (the other reads the winner and gets 409); the
 * controller sees the decision on its watch and resumes the query.
 */
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import { APPROVAL_LIMITS, Kinds, type Query } from '../../api/index.ts';
import type { Principal } from '../../auth/index.ts';
import { type AnyOpenAPIHono, httpError, route } from '../../http/index.ts';
import { ignoreNotFound, isConflict, patchStatus } from '../../kube/client/index.ts';
import type { GatewayDeps } from '../deps.ts';
import { cached, settle } from '../reads.ts';
import { errorResponses, itemParams, objectResponse } from '../routes/resource-schemas.ts';
import { notFound, presentable } from '../routes/resources.ts';
import { decide } from './decide.ts';

/** Edited arguments larger than this are refused: they are stored on the Query. */
export const MAX_ARGUMENT_BYTES = 64 * 1024;
const ATTEMPTS = 4;

export const decisionBody = z
  .object({
    id: z
      .string()
      .min(1)
      .max(APPROVAL_LIMITS.idChars)
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a pending approval id')
      .describe('status.pendingApprovals[].id'),
    decision: z.enum(['approve', 'reject']),
    reason: z
      .string()
      .max(APPROVAL_LIMITS.reasonChars)
      .optional()
      .describe('Why; told to the model on a rejection'),
    arguments: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('approve a tool call with these arguments instead (checked against its input schema)'),
    answer: z
      .string()
      .max(APPROVAL_LIMITS.answerChars)
      .optional()
      .describe('The answer to a question (ask_user)'),
  })
  .strict();

/** Until the cache shows a newer version than `rv` (a conflict says one exists), briefly. */
async function fresher(deps: GatewayDeps, namespace: string, name: string, rv: string | undefined) {
  if (!cached(deps, Kinds.Query, namespace)) return;
  await deps.cache
    .waitFor(
      Kinds.Query,
      namespace,
      name,
      (o) => (o as Query | undefined)?.metadata?.resourceVersion !== rv,
      {
        timeoutMs: 2000,
      },
    )
    .catch(() => undefined);
}

export function mountApprovalRoutes(app: AnyOpenAPIHono, deps: GatewayDeps) {
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/namespaces/{namespace}/queries/{name}/approvals',
      tags: ['Query'],
      description:
        'Decide a pending approval of an input-required Query: approve (optionally with edited arguments, or with the answer to a question) or reject with a reason. Recorded in status.approvals with the caller as `by`.',
      request: {
        params: itemParams,
        body: { required: true, content: { 'application/json': { schema: decisionBody } } },
      },
      responses: {
        200: {
          description: 'The Query with the decision recorded',
          content: { 'application/json': { schema: objectResponse } },
        },
        ...errorResponses,
      },
    }),
    async (c) => {
      const { namespace, name } = c.req.valid('param');
      const body = c.req.valid('json');
      if (body.arguments && Buffer.byteLength(JSON.stringify(body.arguments)) > MAX_ARGUMENT_BYTES)
        throw httpError(
          'invalid_arguments',
          `arguments larger than ${MAX_ARGUMENT_BYTES} bytes are not accepted`,
        );
      // Set by the auth middleware (absent in open mode): the context type of the route does not say so.
      const principal = (c as unknown as Context).get('principal') as Principal | undefined;
      for (let attempt = 1; ; attempt++) {
        const q = await ignoreNotFound(deps.client.get(Kinds.Query, { namespace, name }));
        if (!q) throw notFound('Query', namespace, name);
        const decision = decide(q, body, principal, new Date());
        try {
          const approvals = [...(q.status?.approvals ?? []), decision];
          const updated = await patchStatus<Query>(
            deps.client,
            Kinds.Query,
            q,
            { approvals },
            {
              resourceVersion: q.metadata.resourceVersion,
            },
          );
          await settle(deps, Kinds.Query, namespace, updated);
          deps.logger.info(
            {
              query: `${namespace}/${name}`,
              approval: decision.id,
              decision: decision.decision,
              by: decision.by,
            },
            'approval decided',
          );
          return c.json(presentable(updated as never), 200);
        } catch (err) {
          // Someone wrote the Query since it was read: read it again (the decision may be taken).
          if (!isConflict(err) || attempt >= ATTEMPTS) throw err;
          await fresher(deps, namespace, name, q.metadata.resourceVersion);
        }
      }
    },
  );
}
