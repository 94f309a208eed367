import { OpenAPIHono } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { requestId } from '../../http/index.ts';
import { FakeClient } from '../../kube/client/fake.ts';
import { KubeError } from '../../kube/errors.ts';
import { CoreKinds } from '../../kube/kinds.ts';
import { createLogger } from '../../log/index.ts';
import type { GatewayDeps } from '../deps.ts';
import { gatewayErrorHandler } from '../kube-error-mapper.ts';
import { mountGenericRoutes } from './generic.ts';

function app(client: FakeClient) {
  const a = new OpenAPIHono();
  a.use('*', requestId());
  a.onError(gatewayErrorHandler(createLogger({ level: 'silent' })));
  const deps = {
    client,
    namespace: 'tenant-a',
    logger: createLogger({ level: 'silent' }),
  } as unknown as GatewayDeps;
  mountGenericRoutes(a, deps);
  return a;
}

describe('the generic resource API and scopes', () => {
  it('never falls back to a cluster-wide list of a namespaced kind when the namespaced read fails', async () => {
    const client = new FakeClient();
    const secret = (namespace: string, name: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace, name },
      data: {},
    });
    client.seed(CoreKinds.Secret, secret('tenant-a', 'mine'), secret('tenant-b', 'theirs'));
    client.failNext('list', new KubeError(504, 'Timeout', 'list secrets: timed out'));
    const res = await app(client).request('/v1/resources/api/v1/secrets');
    expect(res.status).toBe(504);
    expect(await res.text()).not.toContain('theirs');
    // Without the failure, only the instance's own namespace is listed.
    const ok = await app(client).request('/v1/resources/api/v1/secrets');
    expect(ok.status).toBe(200);
    const names = ((await ok.json()) as { items: { metadata: { name: string } }[] }).items.map(
      (i) => i.metadata.name,
    );
    expect(names).toEqual(['mine']);
  });
});
