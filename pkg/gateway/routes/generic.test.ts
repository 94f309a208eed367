import { OpenAPIHono } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
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

describe('the generic resource API and Secrets', () => {
  const VALUE = 'generic-api-secret-value-5f0e';
  const encoded = Buffer.from(VALUE).toString('base64');
  const seeded = () => {
    const client = new FakeClient();
    client.seed(CoreKinds.Secret, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: {
        namespace: 'tenant-a',
        name: 'mine',
        labels: { team: 'red' },
        annotations: {
          team: 'red',
          'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({
            stringData: { token: VALUE },
          }),
        },
        managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:data': { 'f:token': {} } } }],
      },
      data: { token: encoded },
      stringData: { other: VALUE },
    } as never);
    return client;
  };

  it('shows whatever resolves to core secrets as metadata and key names, in every spelling and format', async () => {
    const a = app(seeded());
    for (const kind of ['Secret', 'secrets', 'Secrets', 'SECRETS', 'secret', 'SECRET', 'sEcReT']) {
      for (const accept of ['application/json', 'application/yaml']) {
        for (const path of [`/v1/resources/api/v1/${kind}/mine`, `/v1/resources/api/v1/${kind}`]) {
          const res = await a.request(path, { headers: { accept } });
          const text = await res.text();
          expect(res.status, `${path} ${accept}`).toBe(200);
          expect(text).not.toContain(VALUE);
          expect(text).not.toContain(encoded);
          for (const hidden of ['last-applied-configuration', 'managedFields'])
            expect(text, `${path} ${accept}`).not.toContain(hidden);
          const body = parse(text);
          for (const s of body.items ?? [body]) {
            expect(Object.keys(s).sort(), `${path} ${accept}`).toEqual([
              'apiVersion',
              'keys',
              'kind',
              'metadata',
              'type',
            ]);
            expect(s.keys).toEqual(['token']);
          }
        }
      }
    }
    const one = await (await a.request('/v1/resources/api/v1/SECRETS/mine')).json();
    expect(one).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: expect.objectContaining({
        name: 'mine',
        labels: { team: 'red' },
        annotations: { team: 'red' },
      }),
      keys: ['token'],
    });
  });

  it('answers an unknown kind with a 404 Status and asks the API server nothing', async () => {
    const client = seeded();
    const calls: string[] = [];
    for (const verb of ['get', 'list'] as const) {
      const original = client[verb].bind(client) as (...a: unknown[]) => unknown;
      (client as unknown as Record<string, unknown>)[verb] = (...args: unknown[]) => {
        calls.push(verb);
        return original(...args);
      };
    }
    for (const kind of ['secretss', 'Secretz', 'scrt', 'sec']) {
      const res = await app(client).request(`/v1/resources/api/v1/${kind}/mine`);
      expect(res.status, kind).toBe(404);
      expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
    }
    expect(calls).toEqual([]);
  });
});
