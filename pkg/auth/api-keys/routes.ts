import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import {
  errorEnvelopeSchema,
  errorHandler,
  type HttpError,
  httpError,
  relayedError,
  validationHook,
} from '../../http/index.ts';
import { KubeError } from '../../kube/errors.ts';
import { createLogger, type Logger } from '../../log/index.ts';
import type { PrincipalVariables } from '../principal.ts';
import type { ApiKeyService } from './service.ts';

const errorSchema = errorEnvelopeSchema(z.unknown()).meta({ id: 'Error' });

// Strict: a misspelt `expiresAt` must fail loudly, not silently create a key that never expires.
const createBody = z
  .strictObject({
    name: z.string().trim().min(1, 'name must not be empty').max(253).describe('Descriptive name'),
    expires_at: z.iso
      .datetime({
        offset: true,
        message: 'expires_at must be an ISO 8601 timestamp, e.g. 2030-01-01T00:00:00Z',
      })
      .nullish()
      .describe(
        'Optional expiry (ISO 8601, in the future); the key stops working at that instant. A key created with an API key expires no later than that key (the answer says when).',
      ),
  })
  .meta({ id: 'ApiKeyCreate' });

const created = z
  .object({
    id: z.string(),
    name: z.string(),
    public_key: z.string().describe('pk-svc-…: HTTP Basic username, and the key id in paths'),
    secret_key: z.string().describe('sk-svc-…: shown once, never again'),
    created_at: z.string(),
    expires_at: z.string().nullable(),
  })
  .meta({ id: 'ApiKeyCreated' });

const item = z
  .object({
    id: z.string(),
    name: z.string(),
    public_key: z.string(),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    expires_at: z.string().nullable(),
    is_active: z.boolean().describe('false once revoked or expired'),
  })
  .meta({ id: 'ApiKey' });

const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });
const errors = {
  400: { description: 'Invalid request', content: json(errorSchema) },
  401: { description: 'Missing or invalid credentials', content: json(errorSchema) },
};
const tags = ['API keys'];

const listRoute = createRoute({
  method: 'get',
  path: '/',
  tags,
  summary: 'API keys of the instance namespace',
  responses: {
    200: {
      description: 'Keys (never their secrets)',
      content: json(z.object({ items: z.array(item), count: z.number() })),
    },
    401: errors[401],
  },
});

const createKeyRoute = createRoute({
  method: 'post',
  path: '/',
  tags,
  summary: 'Create an API key; the secret key is returned once',
  request: { body: { required: true, content: json(createBody) } },
  responses: {
    201: { description: 'The new key, with its secret key (shown only now)', content: json(created) },
    ...errors,
    403: { description: 'The creating API key is no longer active', content: json(errorSchema) },
    422: { description: 'expires_at not in the future', content: json(errorSchema) },
  },
});

const revokeRoute = createRoute({
  method: 'delete',
  path: '/{public_key}',
  tags,
  summary: 'Revoke an API key (marked inactive, kept for audit)',
  request: { params: z.object({ public_key: z.string().min(1).describe('pk-svc-…') }) },
  responses: {
    204: { description: 'Revoked' },
    401: errors[401],
    404: { description: 'No such key in this namespace', content: json(errorSchema) },
  },
});

/**
 * `/v1/api-keys` as a sub-app: the gateway mounts it with `app.route('/v1/api-keys', apiKeyRoutes(svc))`,
 * which also merges these routes into its OpenAPI document.
 */
export function apiKeyRoutes(
  service: ApiKeyService,
  opts: { logger?: Logger } = {},
): OpenAPIHono<{ Variables: PrincipalVariables }> {
  const app = new OpenAPIHono<{ Variables: PrincipalVariables }>({ defaultHook: validationHook });
  // ApiKeyErrors are HttpErrors; only the key store's KubeErrors need a meaning of their own here.
  app.onError(errorHandler(opts.logger ?? createLogger({ level: 'silent' }), { mappers: [storeFailure] }));

  app.openapi(listRoute, (c) => c.json(service.list(), 200));

  app.openapi(createKeyRoute, async (c) => {
    const body = c.req.valid('json');
    if (body.expires_at && Date.parse(body.expires_at) <= Date.now())
      throw httpError('invalid_expiry', `expires_at ${body.expires_at} is not in the future`, {
        field: 'expires_at',
      });
    const principal = c.get('principal');
    const key = await service.create({
      name: body.name,
      expiresAt: body.expires_at ?? null,
      // A key acts as its creator: a JWT's user, or what the creating key itself acts as.
      createdBy: principal && principal.kind !== 'anonymous' ? principal.actsAs : undefined,
      // A key made by a key expires with it at the latest and stops working when it does (lineage.ts).
      parentKey: principal?.kind === 'api-key' ? principal.publicKey : undefined,
    });
    // The only response that ever carries a secret key: keep it out of every cache.
    c.header('Cache-Control', 'no-store');
    return c.json(key, 201);
  });

  app.openapi(revokeRoute, async (c) => {
    await service.revoke(c.req.valid('param').public_key);
    return c.body(null, 204);
  });
  return app;
}

/**
 * The key store is Kubernetes under the API service's own identity: the API server refusing it
 * (even a 403) is an upstream failure, not the caller's fault, so it is a 5xx here, unlike `/v1`.
 */
function storeFailure(err: Error): HttpError | undefined {
  if (!(err instanceof KubeError)) return undefined;
  const status = (err.code >= 500 && err.code < 600 ? err.code : 502) as ContentfulStatusCode;
  return relayedError(status, 'kubernetes_error', err.message);
}
