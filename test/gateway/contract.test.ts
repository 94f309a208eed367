import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace } from '../support/kube.ts';
import { client, startService, type TestService } from './support.ts';

let svc: TestService;
let ns: string;
let doc: any;

beforeAll(async () => {
  ns = await createNamespace('gw-contract');
  svc = await startService({ namespace: ns });
  doc = await (await fetch(`${svc.url}/openapi.json`)).json();
});
afterAll(() => svc?.close());

const KINDS = ['agents', 'teams', 'queries', 'models', 'secrets', 'evaluators', 'evaluations'];
const expected: Array<[string, string]> = [
  ...KINDS.flatMap(
    (k): Array<[string, string]> => [
      ['get', `/v1/namespaces/{namespace}/${k}`],
      ['post', `/v1/namespaces/{namespace}/${k}`],
      ...['get', 'put', 'patch', 'delete'].map((m): [string, string] => [
        m,
        `/v1/namespaces/{namespace}/${k}/{name}`,
      ]),
    ],
  ),
  ['patch', '/v1/namespaces/{namespace}/evaluations/{name}/cancel'],
  // Decisions on a waiting Query (docs/approvals.md).
  ['post', '/v1/namespaces/{namespace}/queries/{name}/approvals'],
  // Read-only: MCP servers are written with kubectl.
  ['get', '/v1/namespaces/{namespace}/mcpservers'],
  ['get', '/v1/namespaces/{namespace}/mcpservers/{name}'],
  ['get', '/v1/namespaces'],
  ['post', '/v1/namespaces'],
  ['get', '/v1/context'],
  ['get', '/compat/v1/models'],
  ['get', '/compat/v1/models/{id}'],
  ['post', '/compat/v1/chat/completions'],
  ['post', '/mcp'],
  ['delete', '/mcp'],
  ['get', '/v1/api-keys'],
  ['post', '/v1/api-keys'],
  ['delete', '/v1/api-keys/{public_key}'],
  ['get', '/v1/resources/api/{version}/{kind}'],
  ['get', '/v1/resources/api/{version}/{kind}/{resource_name}'],
  ['get', '/v1/resources/apis/{group}/{version}/{kind}'],
  ['get', '/v1/resources/apis/{group}/{version}/{kind}/{resource_name}'],
  ...['/api/v1', '/v1'].flatMap((prefix): Array<[string, string]> => {
    const sources = `${prefix}/namespaces/{namespace}/marketplace-sources`;
    return [
      ['get', sources],
      ['post', sources],
      ['get', `${sources}/permissions`],
      ['get', `${sources}/{name}`],
      ['patch', `${sources}/{name}`],
      ['delete', `${sources}/{name}`],
      ['get', `${prefix}/namespaces/{namespace}/marketplace-items`],
    ];
  }),
  ...['messages', 'conversations', 'memory-status', 'stream', 'traces', 'events', 'sessions'].map(
    (p): [string, string] => ['get', `/v1/broker/${p}`],
  ),
];

/** Every documented operation as [method, path, operation]. */
const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => [method, path, op] as const),
  );

describe('/openapi.json', () => {
  it('documents every route of the API service', () => {
    const have = new Set(operations().map(([m, p]) => `${m} ${p}`));
    const missing = expected.map(([m, p]) => `${m} ${p}`).filter((k) => !have.has(k));
    expect(missing).toEqual([]);
  });

  it('gives every operation its parameters, request body and response schemas', () => {
    const problems: string[] = [];
    for (const [method, path, op] of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      for (const name of [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]))
        if (!op.parameters?.some((p: any) => p.in === 'path' && p.name === name))
          problems.push(`${where}: path parameter ${name} undocumented`);
      const hasBody = ['post', 'put'].includes(method) || (method === 'patch' && !path.endsWith('/cancel'));
      if (hasBody && !op.requestBody?.content?.['application/json']?.schema)
        problems.push(`${where}: no request body schema`);
      const ok = Object.entries(op.responses ?? {}).filter(([s]) => s.startsWith('2'));
      if (ok.length === 0) problems.push(`${where}: no success response`);
      for (const [status, r] of ok as Array<[string, any]>)
        if (status !== '204' && !Object.values(r.content ?? {}).some((c: any) => c.schema))
          problems.push(`${where}: ${status} has no schema`);
      if (!Object.keys(op.responses ?? {}).some((s) => s.startsWith('4')))
        problems.push(`${where}: no error responses documented`);
    }
    expect(problems).toEqual([]);
  });
});

/** Substitutes path parameters; `bad` puts an invalid value in each. */
const fill = (path: string, bad: boolean) =>
  path.replace(/\{(\w+)\}/g, (_, p: string) => {
    if (!bad) return p === 'namespace' ? ns : p === 'version' ? 'v1' : p === 'kind' ? 'configmaps' : 'x';
    return p === 'namespace' ? 'Not_A_Namespace' : p === 'name' ? 'n'.repeat(300) : '..%2F..%2Fetc';
  });

describe('bad input on every route is a clear 4xx, never a 5xx', () => {
  const api = () => client(svc.url);
  const isBrokerOrPublic = (path: string) =>
    path.startsWith('/v1/broker') || !(path.startsWith('/v1') || path.startsWith('/compat'));

  it('malformed and mistyped bodies are 400 with a message', async () => {
    const bodies = [
      '{"name": ',
      '[1, 2]',
      '"text"',
      '{"name": 5, "spec": 5, "metadata": 7, "stringData": 1}',
    ];
    const failures: string[] = [];
    for (const [method, path, op] of operations()) {
      if (!op.requestBody || isBrokerOrPublic(path)) continue;
      for (const body of bodies) {
        const res = await api().call(method.toUpperCase(), fill(path, false), body);
        if (res.status !== 400 || !res.body?.error?.message)
          failures.push(`${method} ${path} ${body}: ${res.status} ${res.text.slice(0, 120)}`);
      }
      const plain = await api().call(method.toUpperCase(), fill(path, false), 'name=x', {
        'content-type': 'text/plain',
      });
      if (plain.status < 400 || plain.status >= 500)
        failures.push(`${method} ${path} text/plain: ${plain.status}`);
    }
    expect(failures).toEqual([]);
  });

  it('invalid path parameters are 4xx with a message', async () => {
    const failures: string[] = [];
    for (const [method, path] of operations()) {
      if (isBrokerOrPublic(path) || !path.includes('{')) continue;
      const res = await api().call(method.toUpperCase(), fill(path, true), method === 'get' ? undefined : {});
      const message = res.body?.error?.message ?? res.body?.message;
      if (res.status < 400 || res.status >= 500 || !message)
        failures.push(`${method} ${path}: ${res.status} ${res.text.slice(0, 120)}`);
    }
    expect(failures).toEqual([]);
  });

  it('names the offending field and echoes the request id', async () => {
    const res = await api().post(`/v1/namespaces/Bad_NS/agents`, { name: 'a', spec: { prompt: 'p' } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('namespace');
    expect(res.body.error.requestId).toBe(res.headers.get('x-request-id'));
    const unknown = await api().get('/v1/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain('/v1/nothing-here');
  });

  it('an oversized body is 413', async () => {
    const small = await startService({ namespace: ns, bodyLimitBytes: 1024 });
    try {
      const res = await client(small.url).post(`/v1/namespaces/${ns}/agents`, {
        name: 'big',
        spec: { prompt: 'x'.repeat(4096) },
      });
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('payload_too_large');
    } finally {
      await small.close();
    }
  });
});
