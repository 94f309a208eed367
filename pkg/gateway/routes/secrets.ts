import { createRoute } from '@hono/zod-openapi';
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { z } from 'zod';
import { API_KEY_SECRET_TYPE, objectMetaSchema } from '../../api/index.ts';
import { type AnyOpenAPIHono, HttpError, route } from '../../http/index.ts';
import { ignoreNotFound } from '../../kube/client/helpers.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';
import type { GatewayDeps } from '../deps.ts';
import { settle } from '../reads.ts';
import { itemRoutes } from './item-routes.ts';
import { errorResponses, listRoute, nsParams } from './resource-schemas.ts';
import { notFound } from './resources.ts';

const SECRET: KindRef<V1Secret> = CoreKinds.Secret;
// kubectl's last-applied annotation holds the values of an applied Secret.
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

const secretView = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Secret'),
  metadata: z.record(z.string(), z.unknown()),
  type: z.string().optional(),
  keys: z.array(z.string()).describe('Names of the keys; values are never returned'),
});
const stringMap = z.record(z.string(), z.string());
const writeBody = z.object({
  name: z.string().min(1).max(253).optional(),
  metadata: objectMetaSchema.optional(),
  type: z.string().optional().describe('Secret type (default Opaque)'),
  stringData: stringMap.optional().describe('Values as plain strings'),
  data: stringMap.optional().describe('Values base64-encoded'),
});

/** A Secret as the API shows it: metadata and key names, never a value. */
export function secretMetadataOnly(s: V1Secret): z.infer<typeof secretView> {
  const { managedFields: _m, annotations, ...metadata } = (s.metadata ?? {}) as Record<string, unknown>;
  // kubectl's last-applied annotation would contain the values of an applied Secret.
  const safeAnnotations = Object.fromEntries(
    Object.entries((annotations as Record<string, string>) ?? {}).filter(([k]) => k !== LAST_APPLIED),
  );
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { ...metadata, annotations: safeAnnotations },
    type: s.type,
    keys: Object.keys(s.data ?? {}).sort(),
  };
}

/** Metadata kept by a PUT: not managedFields, and not kubectl's copy of the values being replaced. */
function replaceableMeta(s: KubernetesObject): Record<string, unknown> {
  const { managedFields: _m, annotations, ...rest } = s.metadata ?? {};
  const { [LAST_APPLIED]: _l, ...kept } = annotations ?? {};
  return { ...rest, annotations: kept };
}

const visible = (s: V1Secret) => s.type !== API_KEY_SECRET_TYPE;

/** API keys are managed by /v1/api-keys and are not shown or editable here. */
function managedElsewhere(s: KubernetesObject | undefined) {
  return !!s && !visible(s as V1Secret);
}

export function mountSecretRoutes(app: AnyOpenAPIHono, deps: GatewayDeps) {
  const base = '/v1/namespaces/{namespace}/secrets';
  const tags = ['Secret'];
  const item = itemRoutes(app, `${base}/{name}`, tags);
  route(
    app,
    listRoute({
      path: base,
      tags,
      description: 'Secrets (metadata and key names only)',
      schema: z.object({ items: z.array(secretView), count: z.number() }),
    }),
    async (c) => {
      const { namespace } = c.req.valid('param');
      const items = (await deps.client.list(SECRET, { namespace })).items
        .filter(visible)
        .map(secretMetadataOnly)
        .sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)));
      return c.json({ items, count: items.length }, 200);
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: base,
      tags,
      request: { params: nsParams, body: { required: true, content: json(writeBody) } },
      responses: { 201: { description: 'Created', content: json(secretView) }, ...errorResponses },
    }),
    async (c) => {
      const { namespace } = c.req.valid('param');
      const b = c.req.valid('json');
      const name = b.name ?? b.metadata?.name;
      if (!name) throw new HttpError(400, 'invalid', 'name (or metadata.name) is required');
      if (b.type === API_KEY_SECRET_TYPE)
        throw new HttpError(
          400,
          'invalid',
          `secrets of type ${API_KEY_SECRET_TYPE} are created through /v1/api-keys`,
        );
      const obj = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { ...b.metadata, name, namespace },
        type: b.type ?? 'Opaque',
        data: b.data,
        stringData: b.stringData,
      };
      const created = await deps.client.create(SECRET, obj as V1Secret);
      await settle(deps, SECRET, namespace, created);
      return c.json(secretMetadataOnly(created), 201);
    },
  );

  item.read(
    'get',
    { status: 200, description: 'Secret metadata and key names', schema: secretView },
    async (c, { namespace, name }) => {
      const s = await ignoreNotFound(deps.client.get(SECRET, { namespace, name }));
      if (!s || !visible(s)) throw notFound('Secret', namespace, name);
      return c.json(secretMetadataOnly(s), 200);
    },
  );

  const update = (method: 'put' | 'patch') =>
    item.write(
      method,
      writeBody.omit({ name: true, type: true }),
      { status: 200, description: 'Updated', schema: secretView },
      async (c, { namespace, name }, b) => {
        const current = await ignoreNotFound(deps.client.get(SECRET, { namespace, name }));
        if (!current || managedElsewhere(current)) throw notFound('Secret', namespace, name);
        // PUT replaces all values; PATCH merges the given keys into the existing ones.
        const patch =
          method === 'put'
            ? { metadata: b.metadata, data: b.data ?? {}, stringData: b.stringData }
            : { metadata: b.metadata, data: b.data, stringData: b.stringData };
        const updated = (
          method === 'put'
            ? await deps.client.replace(SECRET, {
                apiVersion: 'v1',
                kind: 'Secret',
                type: (current as V1Secret).type,
                data: patch.data,
                stringData: patch.stringData,
                metadata: { ...replaceableMeta(current), ...b.metadata, name, namespace },
              } as KubernetesObject)
            : await deps.client.patch(SECRET, { namespace, name }, { type: 'merge', patch })
        ) as V1Secret;
        await settle(deps, SECRET, namespace, updated);
        return c.json(secretMetadataOnly(updated), 200);
      },
    );
  update('put');
  update('patch');

  item.read('delete', { status: 204, description: 'Deleted' }, async (c, { namespace, name }) => {
    if (managedElsewhere(await ignoreNotFound(deps.client.get(SECRET, { namespace, name }))))
      throw notFound('Secret', namespace, name);
    const res = await deps.client.delete(SECRET, { namespace, name });
    await settle(deps, SECRET, namespace, res, { deleted: true, name });
    return c.body(null, 204);
  });
}
