import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { z } from 'zod';
import { objectMetaSchema, SECRET_USAGE_ENGINE, SECRET_USAGE_LABEL } from '../../api/index.ts';
import { type AnyOpenAPIHono, route } from '../../http/index.ts';
import { ignoreNotFound } from '../../kube/client/helpers.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';
import type { GatewayDeps } from '../deps.ts';
import { settle } from '../reads.ts';
import { itemRoutes } from './item-routes.ts';
import { createInRoute, listRoute } from './resource-schemas.ts';
import { notFound } from './resources.ts';
import {
  CREATABLE_SECRET_TYPES,
  checkChangeable,
  checkCreate,
  checkMetadata,
  checkPatchOptIn,
  managedElsewhere,
  refuse,
} from './secret-rules.ts';
import { LAST_APPLIED, secretMetadataOnly, secretView } from './secret-view.ts';

const SECRET: KindRef<V1Secret> = CoreKinds.Secret;

const stringMap = z.record(z.string(), z.string());
const writeBody = z.object({
  name: z.string().min(1).max(253).optional(),
  metadata: objectMetaSchema.optional(),
  type: z
    .string()
    .optional()
    .describe(`Secret type (default Opaque); one of ${CREATABLE_SECRET_TYPES.join(', ')}`),
  stringData: stringMap.optional().describe('Values as plain strings'),
  data: stringMap.optional().describe('Values base64-encoded'),
});

/** Metadata kept by a PUT: not managedFields, and not kubectl's copy of the values being replaced. */
function replaceableMeta(s: KubernetesObject): Record<string, unknown> {
  const { managedFields: _m, annotations, ...rest } = s.metadata ?? {};
  const { [LAST_APPLIED]: _l, ...kept } = annotations ?? {};
  return { ...rest, annotations: kept };
}

/**
 * A PATCH that sets labels applies to the version its opt-in check read (409 if the Secret changed
 * since): otherwise the label could be removed in between and this PATCH would put it back.
 */
function patchMeta(current: V1Secret, meta: Record<string, unknown> | undefined) {
  if (!meta?.labels) return meta;
  return { resourceVersion: current.metadata?.resourceVersion, ...meta };
}

/**
 * `/v1/namespaces/{ns}/secrets`: metadata and key names out, values in. API-key and marketplace
 * credential Secrets belong to their own endpoints and do not exist here; what may be written is
 * decided in secret-rules.ts (types, service-account annotations, the engine opt-in label).
 */
export function mountSecretRoutes(app: AnyOpenAPIHono, deps: GatewayDeps) {
  const base = '/v1/namespaces/{namespace}/secrets';
  const tags = ['Secret'];
  const item = itemRoutes(app, `${base}/{name}`, tags);
  /** The Secret as this API may touch it; 404 for one that is missing or managed elsewhere. */
  const own = async (namespace: string, name: string) => {
    const s = await ignoreNotFound(deps.client.get(SECRET, { namespace, name }));
    if (!s || managedElsewhere(s)) throw notFound('Secret', namespace, name);
    return s;
  };
  route(
    app,
    listRoute({
      path: base,
      tags,
      description: 'Secrets (metadata and key names only)',
      schema: z.object({ items: z.array(secretView), count: z.number() }),
      query: z.object({}),
    }),
    async (c) => {
      const { namespace } = c.req.valid('param');
      const items = (await deps.client.list(SECRET, { namespace })).items
        .filter((s) => !managedElsewhere(s))
        .map(secretMetadataOnly)
        .sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)));
      return c.json({ items, count: items.length }, 200);
    },
  );

  route(
    app,
    createInRoute({
      path: base,
      tags,
      description: `Creates a Secret. Label ${SECRET_USAGE_LABEL}=${SECRET_USAGE_ENGINE} lets the engine use it (Model API keys, header values).`,
      body: writeBody,
      created: secretView,
    }),
    async (c) => {
      const { namespace } = c.req.valid('param');
      const b = c.req.valid('json');
      const name = b.name ?? b.metadata?.name;
      if (!name) throw refuse('name (or metadata.name) is required');
      const type = b.type ?? 'Opaque';
      checkCreate(type, name);
      checkMetadata(b.metadata);
      const obj = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { ...b.metadata, name, namespace },
        type,
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
    async (c, { namespace, name }) => c.json(secretMetadataOnly(await own(namespace, name)), 200),
  );

  const update = (method: 'put' | 'patch') =>
    item.write(
      method,
      writeBody.omit({ name: true }),
      { status: 200, description: 'Updated', schema: secretView },
      async (c, { namespace, name }, b) => {
        const current = await own(namespace, name);
        checkChangeable(current, b.type);
        checkMetadata(b.metadata);
        // PUT replaces every value, so it may set the opt-in label; a PATCH keeps values it did not write.
        if (method === 'patch') checkPatchOptIn(current, b.metadata);
        const updated = (
          method === 'put'
            ? await deps.client.replace(SECRET, {
                apiVersion: 'v1',
                kind: 'Secret',
                type: current.type,
                data: b.data ?? {},
                stringData: b.stringData,
                metadata: { ...replaceableMeta(current), ...b.metadata, name, namespace },
              } as KubernetesObject)
            : await deps.client.patch(
                SECRET,
                { namespace, name },
                {
                  type: 'merge',
                  patch: { metadata: patchMeta(current, b.metadata), data: b.data, stringData: b.stringData },
                },
              )
        ) as V1Secret;
        await settle(deps, SECRET, namespace, updated);
        return c.json(secretMetadataOnly(updated), 200);
      },
    );
  update('put');
  update('patch');

  item.read('delete', { status: 204, description: 'Deleted' }, async (c, { namespace, name }) => {
    // Types this API does not manage (service-account tokens, …) are not deleted here either.
    checkChangeable(await own(namespace, name));
    const res = await deps.client.delete(SECRET, { namespace, name });
    await settle(deps, SECRET, namespace, res, { deleted: true, name });
    return c.body(null, 204);
  });
}
