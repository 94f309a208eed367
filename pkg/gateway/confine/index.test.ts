import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../log/index.ts';
import { gatewayErrorHandler } from '../kube-error-mapper.ts';
import { confineToNamespace } from './index.ts';

function app(served: string | undefined) {
  const a = new Hono();
  let reached = 0;
  a.onError(gatewayErrorHandler(createLogger({ level: 'silent' })));
  a.use('/v1/namespaces/:namespace/*', confineToNamespace(served));
  a.use('/v1/resources/*', confineToNamespace(served));
  a.get('/v1/namespaces/:namespace/agents', (c) => {
    reached++;
    return c.json({ ok: true });
  });
  a.get('/v1/resources/*', (c) => {
    reached++;
    return c.json({ ok: true });
  });
  return { a, reached: () => reached };
}

describe('confineToNamespace', () => {
  it('refuses another namespace with 403 before the handler runs', async () => {
    const { a, reached } = app('team-a');
    const res = await a.request('/v1/namespaces/team-b/agents');
    expect(res.status).toBe(403);
    const body = await res.json();
    expect(body.error.code).toBe('forbidden');
    expect(body.error.message).toContain('"team-a" only');
    const generic = await a.request('/v1/resources/api/v1/secrets?namespace=team-b');
    expect(generic.status).toBe(403);
    expect(reached()).toBe(0);
  });

  it('serves its own namespace, and every namespace when not confined', async () => {
    const own = app('team-a');
    expect((await own.a.request('/v1/namespaces/team-a/agents')).status).toBe(200);
    expect((await own.a.request('/v1/resources/api/v1/pods')).status).toBe(200);
    const open = app(undefined);
    expect((await open.a.request('/v1/namespaces/team-b/agents')).status).toBe(200);
    expect((await open.a.request('/v1/resources/api/v1/pods?namespace=x')).status).toBe(200);
  });
});
